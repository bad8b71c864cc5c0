package v1

import "github.com/converge-dev/converge/framework/api"

// GroupVersion is authorization.k8s.io/v1.
var GroupVersion = api.GroupVersion{Group: "authorization.k8s.io", Version: "v1"}

// ResourceAttributes describe a resource request.
type ResourceAttributes struct {
	Namespace   string `json:"namespace,omitempty" protobuf:"bytes,1,opt,name=namespace"`
	Verb        string `json:"verb,omitempty" protobuf:"bytes,2,opt,name=verb"`
	Group       string `json:"group,omitempty" protobuf:"bytes,3,opt,name=group"`
	Version     string `json:"version,omitempty" protobuf:"bytes,4,opt,name=version"`
	Resource    string `json:"resource,omitempty" protobuf:"bytes,5,opt,name=resource"`
	Subresource string `json:"subresource,omitempty" protobuf:"bytes,6,opt,name=subresource"`
	Name        string `json:"name,omitempty" protobuf:"bytes,7,opt,name=name"`
}

// NonResourceAttributes describe a non-resource request.
type NonResourceAttributes struct {
	Path string `json:"path,omitempty" protobuf:"bytes,1,opt,name=path"`
	Verb string `json:"verb,omitempty" protobuf:"bytes,2,opt,name=verb"`
}

// SubjectAccessReviewSpec is the action and the subject to check.
type SubjectAccessReviewSpec struct {
	ResourceAttributes    *ResourceAttributes    `json:"resourceAttributes,omitempty" protobuf:"bytes,1,opt,name=resourceAttributes"`
	NonResourceAttributes *NonResourceAttributes `json:"nonResourceAttributes,omitempty" protobuf:"bytes,2,opt,name=nonResourceAttributes"`
	User                  string                 `json:"user,omitempty" protobuf:"bytes,3,opt,name=user"`
	Groups                []string               `json:"groups,omitempty" protobuf:"bytes,4,rep,name=groups"`
	// Extra is map<string, ExtraValue> in protobuf: each value a message
	// {repeated items = 1}.
	Extra map[string][]string `json:"extra,omitempty" protobuf:"bytes,5,rep,name=extra"`
	UID   string              `json:"uid,omitempty" protobuf:"bytes,6,opt,name=uid"`
}

// SubjectAccessReviewStatus is the answer.
type SubjectAccessReviewStatus struct {
	Allowed         bool   `json:"allowed" protobuf:"varint,1,opt,name=allowed"`
	Denied          bool   `json:"denied,omitempty" protobuf:"varint,4,opt,name=denied"`
	Reason          string `json:"reason,omitempty" protobuf:"bytes,2,opt,name=reason"`
	EvaluationError string `json:"evaluationError,omitempty" protobuf:"bytes,3,opt,name=evaluationError"`
}

// SubjectAccessReview asks whether a user or group can perform an action.
type SubjectAccessReview struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           SubjectAccessReviewSpec   `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Status         SubjectAccessReviewStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// LocalSubjectAccessReview is a SubjectAccessReview in one namespace.
type LocalSubjectAccessReview struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           SubjectAccessReviewSpec   `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Status         SubjectAccessReviewStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// SelfSubjectAccessReviewSpec is the action to check for the requesting user.
type SelfSubjectAccessReviewSpec struct {
	ResourceAttributes    *ResourceAttributes    `json:"resourceAttributes,omitempty" protobuf:"bytes,1,opt,name=resourceAttributes"`
	NonResourceAttributes *NonResourceAttributes `json:"nonResourceAttributes,omitempty" protobuf:"bytes,2,opt,name=nonResourceAttributes"`
}

// SelfSubjectAccessReview asks whether the requesting user can perform an action
// (kubectl auth can-i).
type SelfSubjectAccessReview struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           SelfSubjectAccessReviewSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Status         SubjectAccessReviewStatus   `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// SelfSubjectRulesReviewSpec names the namespace to list rules in.
type SelfSubjectRulesReviewSpec struct {
	Namespace string `json:"namespace,omitempty" protobuf:"bytes,1,opt,name=namespace"`
}

// ResourceRule is what a user may do on resources.
type ResourceRule struct {
	Verbs         []string `json:"verbs" protobuf:"bytes,1,rep,name=verbs"`
	APIGroups     []string `json:"apiGroups,omitempty" protobuf:"bytes,2,rep,name=apiGroups"`
	Resources     []string `json:"resources,omitempty" protobuf:"bytes,3,rep,name=resources"`
	ResourceNames []string `json:"resourceNames,omitempty" protobuf:"bytes,4,rep,name=resourceNames"`
}

// NonResourceRule is what a user may do on non-resource URLs.
type NonResourceRule struct {
	Verbs           []string `json:"verbs" protobuf:"bytes,1,rep,name=verbs"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty" protobuf:"bytes,2,rep,name=nonResourceURLs"`
}

// SubjectRulesReviewStatus lists the rules.
type SubjectRulesReviewStatus struct {
	ResourceRules    []ResourceRule    `json:"resourceRules" protobuf:"bytes,1,rep,name=resourceRules"`
	NonResourceRules []NonResourceRule `json:"nonResourceRules" protobuf:"bytes,2,rep,name=nonResourceRules"`
	Incomplete       bool              `json:"incomplete" protobuf:"varint,3,opt,name=incomplete"`
	EvaluationError  string            `json:"evaluationError,omitempty" protobuf:"bytes,4,opt,name=evaluationError"`
}

// SelfSubjectRulesReview lists what the requesting user may do in a namespace
// (kubectl auth can-i --list).
type SelfSubjectRulesReview struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           SelfSubjectRulesReviewSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Status         SubjectRulesReviewStatus   `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}
