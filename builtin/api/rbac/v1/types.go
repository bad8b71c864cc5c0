package v1

import "github.com/converge-dev/converge/framework/api"

// GroupVersion is rbac.authorization.k8s.io/v1.
var GroupVersion = api.GroupVersion{Group: "rbac.authorization.k8s.io", Version: "v1"}

// GroupName is the RBAC API group.
const GroupName = "rbac.authorization.k8s.io"

// Well-known values.
const (
	// VerbAll, APIGroupAll, ResourceAll and NonResourceAll match everything.
	VerbAll        = "*"
	APIGroupAll    = "*"
	ResourceAll    = "*"
	NonResourceAll = "*"

	UserKind           = "User"
	GroupKind          = "Group"
	ServiceAccountKind = "ServiceAccount"
)

// PolicyRule grants verbs on resources or non-resource URLs.
type PolicyRule struct {
	Verbs           []string `json:"verbs" protobuf:"bytes,1,rep,name=verbs"`
	APIGroups       []string `json:"apiGroups,omitempty" protobuf:"bytes,2,rep,name=apiGroups"`
	Resources       []string `json:"resources,omitempty" protobuf:"bytes,3,rep,name=resources"`
	ResourceNames   []string `json:"resourceNames,omitempty" protobuf:"bytes,4,rep,name=resourceNames"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty" protobuf:"bytes,5,rep,name=nonResourceURLs"`
}

// Subject is a user, group or ServiceAccount a binding applies to.
type Subject struct {
	Kind      string `json:"kind" protobuf:"bytes,1,opt,name=kind"`
	APIGroup  string `json:"apiGroup,omitempty" protobuf:"bytes,2,opt,name=apiGroup"`
	Name      string `json:"name" protobuf:"bytes,3,opt,name=name"`
	Namespace string `json:"namespace,omitempty" protobuf:"bytes,4,opt,name=namespace"`
}

// RoleRef names the role a binding grants.
type RoleRef struct {
	APIGroup string `json:"apiGroup" protobuf:"bytes,1,opt,name=apiGroup"`
	Kind     string `json:"kind" protobuf:"bytes,2,opt,name=kind"`
	Name     string `json:"name" protobuf:"bytes,3,opt,name=name"`
}

// Role is a namespaced set of rules.
type Role struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Rules          []PolicyRule `json:"rules" protobuf:"bytes,2,rep,name=rules"`
}

// RoleList is a list of Roles.
type RoleList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []Role `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// RoleBinding grants a Role or ClusterRole's rules in its namespace.
type RoleBinding struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Subjects       []Subject `json:"subjects,omitempty" protobuf:"bytes,2,rep,name=subjects"`
	RoleRef        RoleRef   `json:"roleRef" protobuf:"bytes,3,opt,name=roleRef"`
}

// RoleBindingList is a list of RoleBindings.
type RoleBindingList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []RoleBinding `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// AggregationRule makes a ClusterRole the union of the ClusterRoles its
// selectors match.
type AggregationRule struct {
	ClusterRoleSelectors []api.LabelSelector `json:"clusterRoleSelectors,omitempty" protobuf:"bytes,1,rep,name=clusterRoleSelectors"`
}

// ClusterRole is a cluster-wide set of rules.
type ClusterRole struct {
	api.TypeMeta    `json:",inline"`
	api.ObjectMeta  `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Rules           []PolicyRule     `json:"rules" protobuf:"bytes,2,rep,name=rules"`
	AggregationRule *AggregationRule `json:"aggregationRule,omitempty" protobuf:"bytes,3,opt,name=aggregationRule"`
}

// ClusterRoleList is a list of ClusterRoles.
type ClusterRoleList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []ClusterRole `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// ClusterRoleBinding grants a ClusterRole's rules cluster-wide.
type ClusterRoleBinding struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Subjects       []Subject `json:"subjects,omitempty" protobuf:"bytes,2,rep,name=subjects"`
	RoleRef        RoleRef   `json:"roleRef" protobuf:"bytes,3,opt,name=roleRef"`
}

// ClusterRoleBindingList is a list of ClusterRoleBindings.
type ClusterRoleBindingList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []ClusterRoleBinding `json:"items" protobuf:"bytes,2,rep,name=items"`
}
