package v1

import "github.com/converge-dev/converge/framework/api"

// GroupVersion is apiregistration.k8s.io/v1.
var GroupVersion = api.GroupVersion{Group: "apiregistration.k8s.io", Version: "v1"}

// AutomanagedLabel marks the APIServices the control plane keeps for the
// group versions it serves (value "onstart" for built-in groups, "true" for
// custom resources' groups), as kube-apiserver labels them.
const AutomanagedLabel = "kube-aggregator.kubernetes.io/automanaged"

// APIService says which server serves one group version.
type APIService struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           APIServiceSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         APIServiceStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// APIServiceSpec names the group version and where it is served.
type APIServiceSpec struct {
	// Service is the Service of an aggregated API server; nil means the
	// API server itself serves the group version (a local APIService).
	Service *ServiceReference `json:"service,omitempty" protobuf:"bytes,1,opt,name=service"`
	// Group is the API group name.
	Group string `json:"group,omitempty" protobuf:"bytes,2,opt,name=group"`
	// Version is the API version.
	Version string `json:"version,omitempty" protobuf:"bytes,3,opt,name=version"`
	// InsecureSkipTLSVerify skips verifying the aggregated server's certificate.
	InsecureSkipTLSVerify bool `json:"insecureSkipTLSVerify,omitempty" protobuf:"varint,4,opt,name=insecureSkipTLSVerify"`
	// CABundle verifies the aggregated server's certificate.
	CABundle []byte `json:"caBundle,omitempty" protobuf:"bytes,5,opt,name=caBundle"`
	// GroupPriorityMinimum orders groups in discovery (higher first).
	GroupPriorityMinimum int32 `json:"groupPriorityMinimum" protobuf:"varint,7,opt,name=groupPriorityMinimum"`
	// VersionPriority orders the versions of a group (higher first).
	VersionPriority int32 `json:"versionPriority" protobuf:"varint,8,opt,name=versionPriority"`
}

// ServiceReference names a Service and port.
type ServiceReference struct {
	Namespace string `json:"namespace,omitempty" protobuf:"bytes,1,opt,name=namespace"`
	Name      string `json:"name,omitempty" protobuf:"bytes,2,opt,name=name"`
	Port      *int32 `json:"port,omitempty" protobuf:"varint,3,opt,name=port"`
}

// APIServiceStatus is the observed state.
type APIServiceStatus struct {
	Conditions []APIServiceCondition `json:"conditions,omitempty" protobuf:"bytes,1,rep,name=conditions" patchStrategy:"merge" patchMergeKey:"type" listType:"map" listMapKeys:"type"`
}

// APIServiceCondition is one condition (type Available).
type APIServiceCondition struct {
	Type               string   `json:"type" protobuf:"bytes,1,opt,name=type"`
	Status             string   `json:"status" protobuf:"bytes,2,opt,name=status"`
	LastTransitionTime api.Time `json:"lastTransitionTime,omitempty" protobuf:"bytes,3,opt,name=lastTransitionTime"`
	Reason             string   `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	Message            string   `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
}

// Available is the condition type saying whether the group version answers.
const Available = "Available"

// APIServiceList is a list of APIServices.
type APIServiceList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []APIService `json:"items" protobuf:"bytes,2,rep,name=items"`
}
