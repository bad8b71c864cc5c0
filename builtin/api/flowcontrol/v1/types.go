package v1

import "github.com/converge-dev/converge/framework/api"

// GroupVersion is flowcontrol.apiserver.k8s.io/v1.
var GroupVersion = api.GroupVersion{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}

// Wildcards of the policy rules.
const (
	APIGroupAll    = "*"
	ResourceAll    = "*"
	VerbAll        = "*"
	NonResourceAll = "*"
	NamespaceEvery = "*"
	// NameAll is the ServiceAccount name matching every ServiceAccount of a
	// namespace.
	NameAll = "*"
)

// FlowSchema sorts requests into a priority level.
type FlowSchema struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           FlowSchemaSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         FlowSchemaStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// FlowSchemaList is a list of FlowSchemas.
type FlowSchemaList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []FlowSchema `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// FlowSchemaSpec says which requests a FlowSchema matches and where they go.
type FlowSchemaSpec struct {
	PriorityLevelConfiguration PriorityLevelConfigurationReference `json:"priorityLevelConfiguration" protobuf:"bytes,1,opt,name=priorityLevelConfiguration"`
	MatchingPrecedence         int32                               `json:"matchingPrecedence" protobuf:"varint,2,opt,name=matchingPrecedence"`
	DistinguisherMethod        *FlowDistinguisherMethod            `json:"distinguisherMethod,omitempty" protobuf:"bytes,3,opt,name=distinguisherMethod"`
	Rules                      []PolicyRulesWithSubjects           `json:"rules,omitempty" protobuf:"bytes,4,rep,name=rules"`
}

// FlowDistinguisherMethodType splits a schema's requests into flows.
type FlowDistinguisherMethodType string

// Flow distinguisher methods.
const (
	FlowDistinguisherMethodByUserType      FlowDistinguisherMethodType = "ByUser"
	FlowDistinguisherMethodByNamespaceType FlowDistinguisherMethodType = "ByNamespace"
)

// FlowDistinguisherMethod names the method.
type FlowDistinguisherMethod struct {
	Type FlowDistinguisherMethodType `json:"type" protobuf:"bytes,1,opt,name=type"`
}

// PriorityLevelConfigurationReference names a priority level.
type PriorityLevelConfigurationReference struct {
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
}

// PolicyRulesWithSubjects matches requests of some subjects to some rules.
type PolicyRulesWithSubjects struct {
	Subjects         []Subject               `json:"subjects" protobuf:"bytes,1,rep,name=subjects"`
	ResourceRules    []ResourcePolicyRule    `json:"resourceRules,omitempty" protobuf:"bytes,2,rep,name=resourceRules"`
	NonResourceRules []NonResourcePolicyRule `json:"nonResourceRules,omitempty" protobuf:"bytes,3,rep,name=nonResourceRules"`
}

// SubjectKind is the kind of a Subject.
type SubjectKind string

// Subject kinds.
const (
	SubjectKindUser           SubjectKind = "User"
	SubjectKindGroup          SubjectKind = "Group"
	SubjectKindServiceAccount SubjectKind = "ServiceAccount"
)

// Subject is a user, group or ServiceAccount.
type Subject struct {
	Kind           SubjectKind            `json:"kind" protobuf:"bytes,1,opt,name=kind"`
	User           *UserSubject           `json:"user,omitempty" protobuf:"bytes,2,opt,name=user"`
	Group          *GroupSubject          `json:"group,omitempty" protobuf:"bytes,3,opt,name=group"`
	ServiceAccount *ServiceAccountSubject `json:"serviceAccount,omitempty" protobuf:"bytes,4,opt,name=serviceAccount"`
}

// UserSubject names a user.
type UserSubject struct {
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
}

// GroupSubject names a group.
type GroupSubject struct {
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
}

// ServiceAccountSubject names a ServiceAccount.
type ServiceAccountSubject struct {
	Namespace string `json:"namespace" protobuf:"bytes,1,opt,name=namespace"`
	Name      string `json:"name" protobuf:"bytes,2,opt,name=name"`
}

// ResourcePolicyRule matches resource requests.
type ResourcePolicyRule struct {
	Verbs        []string `json:"verbs" protobuf:"bytes,1,rep,name=verbs"`
	APIGroups    []string `json:"apiGroups" protobuf:"bytes,2,rep,name=apiGroups"`
	Resources    []string `json:"resources" protobuf:"bytes,3,rep,name=resources"`
	ClusterScope bool     `json:"clusterScope,omitempty" protobuf:"varint,4,opt,name=clusterScope"`
	Namespaces   []string `json:"namespaces" protobuf:"bytes,5,rep,name=namespaces"`
}

// NonResourcePolicyRule matches non-resource requests.
type NonResourcePolicyRule struct {
	Verbs           []string `json:"verbs" protobuf:"bytes,1,rep,name=verbs"`
	NonResourceURLs []string `json:"nonResourceURLs" protobuf:"bytes,6,rep,name=nonResourceURLs"`
}

// ConditionStatus is True, False or Unknown.
type ConditionStatus string

// Condition statuses.
const (
	ConditionTrue    ConditionStatus = "True"
	ConditionFalse   ConditionStatus = "False"
	ConditionUnknown ConditionStatus = "Unknown"
)

// FlowSchemaConditionType names a FlowSchema condition.
type FlowSchemaConditionType string

// FlowSchemaConditionDangling is True when the schema's priority level does
// not exist.
const FlowSchemaConditionDangling FlowSchemaConditionType = "Dangling"

// FlowSchemaStatus is the observed state of a FlowSchema.
type FlowSchemaStatus struct {
	Conditions []FlowSchemaCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,1,rep,name=conditions"`
}

// FlowSchemaCondition is one condition of a FlowSchema.
type FlowSchemaCondition struct {
	Type               FlowSchemaConditionType `json:"type,omitempty" protobuf:"bytes,1,opt,name=type"`
	Status             ConditionStatus         `json:"status,omitempty" protobuf:"bytes,2,opt,name=status"`
	LastTransitionTime api.Time                `json:"lastTransitionTime,omitempty" protobuf:"bytes,3,opt,name=lastTransitionTime"`
	Reason             string                  `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	Message            string                  `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
}

// PriorityLevelConfiguration is a priority level.
type PriorityLevelConfiguration struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           PriorityLevelConfigurationSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         PriorityLevelConfigurationStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// PriorityLevelConfigurationList is a list of PriorityLevelConfigurations.
type PriorityLevelConfigurationList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []PriorityLevelConfiguration `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// PriorityLevelEnablement is Exempt or Limited.
type PriorityLevelEnablement string

// Priority level types.
const (
	PriorityLevelEnablementExempt  PriorityLevelEnablement = "Exempt"
	PriorityLevelEnablementLimited PriorityLevelEnablement = "Limited"
)

// PriorityLevelConfigurationSpec configures a priority level.
type PriorityLevelConfigurationSpec struct {
	Type    PriorityLevelEnablement            `json:"type" protobuf:"bytes,1,opt,name=type"`
	Limited *LimitedPriorityLevelConfiguration `json:"limited,omitempty" protobuf:"bytes,2,opt,name=limited"`
	Exempt  *ExemptPriorityLevelConfiguration  `json:"exempt,omitempty" protobuf:"bytes,3,opt,name=exempt"`
}

// LimitedPriorityLevelConfiguration bounds a level's concurrency.
type LimitedPriorityLevelConfiguration struct {
	NominalConcurrencyShares *int32        `json:"nominalConcurrencyShares" protobuf:"varint,1,opt,name=nominalConcurrencyShares"`
	LimitResponse            LimitResponse `json:"limitResponse,omitempty" protobuf:"bytes,2,opt,name=limitResponse"`
	LendablePercent          *int32        `json:"lendablePercent,omitempty" protobuf:"varint,3,opt,name=lendablePercent"`
	BorrowingLimitPercent    *int32        `json:"borrowingLimitPercent,omitempty" protobuf:"varint,4,opt,name=borrowingLimitPercent"`
}

// LimitResponseType is Queue or Reject.
type LimitResponseType string

// Limit response types.
const (
	LimitResponseTypeQueue  LimitResponseType = "Queue"
	LimitResponseTypeReject LimitResponseType = "Reject"
)

// LimitResponse says what happens to requests over the limit.
type LimitResponse struct {
	Type    LimitResponseType     `json:"type" protobuf:"bytes,1,opt,name=type"`
	Queuing *QueuingConfiguration `json:"queuing,omitempty" protobuf:"bytes,2,opt,name=queuing"`
}

// QueuingConfiguration configures the queues of a level.
type QueuingConfiguration struct {
	Queues           int32 `json:"queues" protobuf:"varint,1,opt,name=queues"`
	HandSize         int32 `json:"handSize" protobuf:"varint,2,opt,name=handSize"`
	QueueLengthLimit int32 `json:"queueLengthLimit" protobuf:"varint,3,opt,name=queueLengthLimit"`
}

// ExemptPriorityLevelConfiguration configures an exempt level.
type ExemptPriorityLevelConfiguration struct {
	NominalConcurrencyShares *int32 `json:"nominalConcurrencyShares,omitempty" protobuf:"varint,1,opt,name=nominalConcurrencyShares"`
	LendablePercent          *int32 `json:"lendablePercent,omitempty" protobuf:"varint,2,opt,name=lendablePercent"`
}

// PriorityLevelConfigurationConditionType names a priority level condition.
type PriorityLevelConfigurationConditionType string

// PriorityLevelConfigurationStatus is the observed state of a level.
type PriorityLevelConfigurationStatus struct {
	Conditions []PriorityLevelConfigurationCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,1,rep,name=conditions"`
}

// PriorityLevelConfigurationCondition is one condition of a level.
type PriorityLevelConfigurationCondition struct {
	Type               PriorityLevelConfigurationConditionType `json:"type,omitempty" protobuf:"bytes,1,opt,name=type"`
	Status             ConditionStatus                         `json:"status,omitempty" protobuf:"bytes,2,opt,name=status"`
	LastTransitionTime api.Time                                `json:"lastTransitionTime,omitempty" protobuf:"bytes,3,opt,name=lastTransitionTime"`
	Reason             string                                  `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	Message            string                                  `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
}
