package v1

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// GroupVersion is node.k8s.io/v1.
var GroupVersion = api.GroupVersion{Group: "node.k8s.io", Version: "v1"}

// RuntimeClass names a container runtime configuration (the handler a node's
// runtime knows) that pods select with spec.runtimeClassName.
type RuntimeClass struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Handler is the runtime configuration's name on the nodes (a DNS label;
	// immutable).
	Handler string `json:"handler" protobuf:"bytes,2,opt,name=handler"`
	// Overhead is what running a pod with this class costs beyond its
	// containers' requests.
	Overhead *Overhead `json:"overhead,omitempty" protobuf:"bytes,3,opt,name=overhead"`
	// Scheduling constrains the nodes the class's pods may run on.
	Scheduling *Scheduling `json:"scheduling,omitempty" protobuf:"bytes,4,opt,name=scheduling"`
}

// Overhead is the resource overhead of a pod of the class.
type Overhead struct {
	// PodFixed is the fixed overhead per pod.
	PodFixed corev1.ResourceList `json:"podFixed,omitempty" protobuf:"bytes,1,opt,name=podFixed" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
}

// Scheduling is the node selector and tolerations the class's pods get.
type Scheduling struct {
	// NodeSelector labels are merged into the pod's node selector; a pod
	// selecting another value for one of the keys is refused.
	NodeSelector map[string]string `json:"nodeSelector,omitempty" protobuf:"bytes,1,opt,name=nodeSelector"`
	// Tolerations are added to the pod's.
	Tolerations []corev1.Toleration `json:"tolerations,omitempty" protobuf:"bytes,2,rep,name=tolerations"`
}

// RuntimeClassList is a list of RuntimeClasses.
type RuntimeClassList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []RuntimeClass `json:"items" protobuf:"bytes,2,rep,name=items"`
}
