package v1

import "github.com/converge-dev/converge/framework/api"

// ValidatingAdmissionPolicy describes CEL validations that admission applies
// to the requests its bindings select.
type ValidatingAdmissionPolicy struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           ValidatingAdmissionPolicySpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         ValidatingAdmissionPolicyStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// ValidatingAdmissionPolicyList is a list of ValidatingAdmissionPolicies.
type ValidatingAdmissionPolicyList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []ValidatingAdmissionPolicy `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// ValidatingAdmissionPolicySpec is what a policy checks and on which requests.
type ValidatingAdmissionPolicySpec struct {
	ParamKind        *ParamKind        `json:"paramKind,omitempty" protobuf:"bytes,1,rep,name=paramKind"`
	MatchConstraints *MatchResources   `json:"matchConstraints,omitempty" protobuf:"bytes,2,rep,name=matchConstraints"`
	Validations      []Validation      `json:"validations,omitempty" protobuf:"bytes,3,rep,name=validations"`
	FailurePolicy    *string           `json:"failurePolicy,omitempty" protobuf:"bytes,4,opt,name=failurePolicy"`
	AuditAnnotations []AuditAnnotation `json:"auditAnnotations,omitempty" protobuf:"bytes,5,rep,name=auditAnnotations"`
	MatchConditions  []MatchCondition  `json:"matchConditions,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,6,rep,name=matchConditions"`
	Variables        []Variable        `json:"variables,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,7,rep,name=variables"`
}

// ValidatingAdmissionPolicyStatus is written by the type-checking controller.
type ValidatingAdmissionPolicyStatus struct {
	ObservedGeneration int64           `json:"observedGeneration,omitempty" protobuf:"varint,1,opt,name=observedGeneration"`
	TypeChecking       *TypeChecking   `json:"typeChecking,omitempty" protobuf:"bytes,2,opt,name=typeChecking"`
	Conditions         []api.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,3,rep,name=conditions"`
}

// TypeChecking holds the result of type checking a policy's expressions.
type TypeChecking struct {
	ExpressionWarnings []ExpressionWarning `json:"expressionWarnings,omitempty" protobuf:"bytes,1,rep,name=expressionWarnings"`
}

// ExpressionWarning is a type-checking problem of one expression.
type ExpressionWarning struct {
	FieldRef string `json:"fieldRef" protobuf:"bytes,2,opt,name=fieldRef"`
	Warning  string `json:"warning" protobuf:"bytes,3,opt,name=warning"`
}

// ParamKind names the kind of a policy's parameter objects.
type ParamKind struct {
	APIVersion string `json:"apiVersion,omitempty" protobuf:"bytes,1,rep,name=apiVersion"`
	Kind       string `json:"kind,omitempty" protobuf:"bytes,2,rep,name=kind"`
}

// Validation is one CEL expression that must be true.
type Validation struct {
	Expression        string  `json:"expression" protobuf:"bytes,1,opt,name=Expression"`
	Message           string  `json:"message,omitempty" protobuf:"bytes,2,opt,name=message"`
	Reason            *string `json:"reason,omitempty" protobuf:"bytes,3,opt,name=reason"`
	MessageExpression string  `json:"messageExpression,omitempty" protobuf:"bytes,4,opt,name=messageExpression"`
}

// Variable is a named CEL expression other expressions use as variables.NAME.
type Variable struct {
	Name       string `json:"name" protobuf:"bytes,1,opt,name=Name"`
	Expression string `json:"expression" protobuf:"bytes,2,opt,name=Expression"`
}

// AuditAnnotation adds an audit annotation POLICY/KEY with the value of a CEL
// expression (none when it is null).
type AuditAnnotation struct {
	Key             string `json:"key" protobuf:"bytes,1,opt,name=key"`
	ValueExpression string `json:"valueExpression" protobuf:"bytes,2,opt,name=valueExpression"`
}

// ValidatingAdmissionPolicyBinding applies a policy to requests, with
// parameters and validation actions.
type ValidatingAdmissionPolicyBinding struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           ValidatingAdmissionPolicyBindingSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// ValidatingAdmissionPolicyBindingList is a list of bindings.
type ValidatingAdmissionPolicyBindingList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []ValidatingAdmissionPolicyBinding `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// ValidatingAdmissionPolicyBindingSpec names the policy, its parameters, the
// requests it further selects and what a failed validation does.
type ValidatingAdmissionPolicyBindingSpec struct {
	PolicyName        string          `json:"policyName,omitempty" protobuf:"bytes,1,rep,name=policyName"`
	ParamRef          *ParamRef       `json:"paramRef,omitempty" protobuf:"bytes,2,rep,name=paramRef"`
	MatchResources    *MatchResources `json:"matchResources,omitempty" protobuf:"bytes,3,rep,name=matchResources"`
	ValidationActions []string        `json:"validationActions,omitempty" protobuf:"bytes,4,rep,name=validationActions"`
}

// ParamRef finds a binding's parameter objects: by name or by label selector.
type ParamRef struct {
	Name                    string             `json:"name,omitempty" protobuf:"bytes,1,rep,name=name"`
	Namespace               string             `json:"namespace,omitempty" protobuf:"bytes,2,rep,name=namespace"`
	Selector                *api.LabelSelector `json:"selector,omitempty" protobuf:"bytes,3,rep,name=selector"`
	ParameterNotFoundAction *string            `json:"parameterNotFoundAction,omitempty" protobuf:"bytes,4,rep,name=parameterNotFoundAction"`
}

// MatchResources selects requests by resource, namespace and object labels.
type MatchResources struct {
	NamespaceSelector    *api.LabelSelector        `json:"namespaceSelector,omitempty" protobuf:"bytes,1,opt,name=namespaceSelector"`
	ObjectSelector       *api.LabelSelector        `json:"objectSelector,omitempty" protobuf:"bytes,2,opt,name=objectSelector"`
	ResourceRules        []NamedRuleWithOperations `json:"resourceRules,omitempty" protobuf:"bytes,3,rep,name=resourceRules"`
	ExcludeResourceRules []NamedRuleWithOperations `json:"excludeResourceRules,omitempty" protobuf:"bytes,4,rep,name=excludeResourceRules"`
	MatchPolicy          *string                   `json:"matchPolicy,omitempty" protobuf:"bytes,7,opt,name=matchPolicy"`
}

// NamedRuleWithOperations is a RuleWithOperations limited to resourceNames.
type NamedRuleWithOperations struct {
	ResourceNames      []string `json:"resourceNames,omitempty" protobuf:"bytes,1,rep,name=resourceNames"`
	RuleWithOperations `json:",inline" protobuf:"bytes,2,opt,name=ruleWithOperations"`
}

// Validation actions of a binding.
const (
	ActionDeny  = "Deny"
	ActionWarn  = "Warn"
	ActionAudit = "Audit"
)
