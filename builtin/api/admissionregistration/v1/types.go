package v1

import "github.com/converge-dev/converge/framework/api"

// GroupVersion is admissionregistration.k8s.io/v1.
var GroupVersion = api.GroupVersion{Group: "admissionregistration.k8s.io", Version: "v1"}

// Rule selects API groups, versions, resources and scope.
type Rule struct {
	APIGroups   []string `json:"apiGroups,omitempty" protobuf:"bytes,1,rep,name=apiGroups"`
	APIVersions []string `json:"apiVersions,omitempty" protobuf:"bytes,2,rep,name=apiVersions"`
	Resources   []string `json:"resources,omitempty" protobuf:"bytes,3,rep,name=resources"`
	Scope       *string  `json:"scope,omitempty" protobuf:"bytes,4,rep,name=scope"`
}

// RuleWithOperations adds operations (CREATE, UPDATE, DELETE, CONNECT, *) to a Rule.
type RuleWithOperations struct {
	Operations []string `json:"operations,omitempty" protobuf:"bytes,1,rep,name=operations"`
	Rule       `json:",inline" protobuf:"bytes,2,opt,name=rule"`
}

// ServiceReference locates a webhook Service.
type ServiceReference struct {
	Namespace string  `json:"namespace" protobuf:"bytes,1,opt,name=namespace"`
	Name      string  `json:"name" protobuf:"bytes,2,opt,name=name"`
	Path      *string `json:"path,omitempty" protobuf:"bytes,3,opt,name=path"`
	Port      *int32  `json:"port,omitempty" protobuf:"varint,4,opt,name=port"`
}

// WebhookClientConfig says how to reach a webhook.
type WebhookClientConfig struct {
	URL      *string           `json:"url,omitempty" protobuf:"bytes,3,opt,name=url"`
	Service  *ServiceReference `json:"service,omitempty" protobuf:"bytes,1,opt,name=service"`
	CABundle []byte            `json:"caBundle,omitempty" protobuf:"bytes,2,opt,name=caBundle"`
}

// MatchCondition is a CEL expression that must hold for the webhook to be called.
type MatchCondition struct {
	Name       string `json:"name" protobuf:"bytes,1,opt,name=Name"`
	Expression string `json:"expression" protobuf:"bytes,2,opt,name=Expression"`
}

// ValidatingWebhook is one validating webhook.
type ValidatingWebhook struct {
	Name                    string               `json:"name" protobuf:"bytes,1,opt,name=name"`
	ClientConfig            WebhookClientConfig  `json:"clientConfig" protobuf:"bytes,2,opt,name=clientConfig"`
	Rules                   []RuleWithOperations `json:"rules,omitempty" protobuf:"bytes,3,rep,name=rules"`
	FailurePolicy           *string              `json:"failurePolicy,omitempty" protobuf:"bytes,4,opt,name=failurePolicy"`
	MatchPolicy             *string              `json:"matchPolicy,omitempty" protobuf:"bytes,9,opt,name=matchPolicy"`
	NamespaceSelector       *api.LabelSelector   `json:"namespaceSelector,omitempty" protobuf:"bytes,5,opt,name=namespaceSelector"`
	ObjectSelector          *api.LabelSelector   `json:"objectSelector,omitempty" protobuf:"bytes,10,opt,name=objectSelector"`
	SideEffects             *string              `json:"sideEffects" protobuf:"bytes,6,opt,name=sideEffects"`
	TimeoutSeconds          *int32               `json:"timeoutSeconds,omitempty" protobuf:"varint,7,opt,name=timeoutSeconds"`
	AdmissionReviewVersions []string             `json:"admissionReviewVersions" protobuf:"bytes,8,rep,name=admissionReviewVersions"`
	MatchConditions         []MatchCondition     `json:"matchConditions,omitempty" protobuf:"bytes,11,rep,name=matchConditions"`
}

// MutatingWebhook is one mutating webhook.
type MutatingWebhook struct {
	Name                    string               `json:"name" protobuf:"bytes,1,opt,name=name"`
	ClientConfig            WebhookClientConfig  `json:"clientConfig" protobuf:"bytes,2,opt,name=clientConfig"`
	Rules                   []RuleWithOperations `json:"rules,omitempty" protobuf:"bytes,3,rep,name=rules"`
	FailurePolicy           *string              `json:"failurePolicy,omitempty" protobuf:"bytes,4,opt,name=failurePolicy"`
	MatchPolicy             *string              `json:"matchPolicy,omitempty" protobuf:"bytes,9,opt,name=matchPolicy"`
	NamespaceSelector       *api.LabelSelector   `json:"namespaceSelector,omitempty" protobuf:"bytes,5,opt,name=namespaceSelector"`
	ObjectSelector          *api.LabelSelector   `json:"objectSelector,omitempty" protobuf:"bytes,11,opt,name=objectSelector"`
	SideEffects             *string              `json:"sideEffects" protobuf:"bytes,6,opt,name=sideEffects"`
	TimeoutSeconds          *int32               `json:"timeoutSeconds,omitempty" protobuf:"varint,7,opt,name=timeoutSeconds"`
	AdmissionReviewVersions []string             `json:"admissionReviewVersions" protobuf:"bytes,8,rep,name=admissionReviewVersions"`
	ReinvocationPolicy      *string              `json:"reinvocationPolicy,omitempty" protobuf:"bytes,10,opt,name=reinvocationPolicy"`
	MatchConditions         []MatchCondition     `json:"matchConditions,omitempty" protobuf:"bytes,12,rep,name=matchConditions"`
}

// ValidatingWebhookConfiguration configures validating webhooks.
type ValidatingWebhookConfiguration struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Webhooks       []ValidatingWebhook `json:"webhooks,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,2,rep,name=Webhooks"`
}

// ValidatingWebhookConfigurationList is a list of ValidatingWebhookConfigurations.
type ValidatingWebhookConfigurationList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []ValidatingWebhookConfiguration `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// MutatingWebhookConfiguration configures mutating webhooks.
type MutatingWebhookConfiguration struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Webhooks       []MutatingWebhook `json:"webhooks,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,2,rep,name=Webhooks"`
}

// MutatingWebhookConfigurationList is a list of MutatingWebhookConfigurations.
type MutatingWebhookConfigurationList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []MutatingWebhookConfiguration `json:"items" protobuf:"bytes,2,rep,name=items"`
}
