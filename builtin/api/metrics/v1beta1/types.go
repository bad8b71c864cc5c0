package v1beta1

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// GroupVersion is metrics.k8s.io/v1beta1.
var GroupVersion = api.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}

// NodeMetrics is a node's resource usage: CPU (cores) averaged over Window
// ending at Timestamp, and memory working set (bytes) at Timestamp.
type NodeMetrics struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Timestamp      api.Time            `json:"timestamp" protobuf:"bytes,2,opt,name=timestamp"`
	Window         api.Duration        `json:"window" protobuf:"bytes,3,opt,name=window"`
	Usage          corev1.ResourceList `json:"usage" protobuf:"bytes,4,rep,name=usage"`
}

// NodeMetricsList is a list of NodeMetrics.
type NodeMetricsList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []NodeMetrics `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// PodMetrics is the resource usage of a pod's containers.
type PodMetrics struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Timestamp      api.Time           `json:"timestamp" protobuf:"bytes,2,opt,name=timestamp"`
	Window         api.Duration       `json:"window" protobuf:"bytes,3,opt,name=window"`
	Containers     []ContainerMetrics `json:"containers" protobuf:"bytes,4,rep,name=containers"`
}

// ContainerMetrics is one container's resource usage.
type ContainerMetrics struct {
	Name  string              `json:"name" protobuf:"bytes,1,opt,name=name"`
	Usage corev1.ResourceList `json:"usage" protobuf:"bytes,2,rep,name=usage"`
}

// PodMetricsList is a list of PodMetrics.
type PodMetricsList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []PodMetrics `json:"items" protobuf:"bytes,2,rep,name=items"`
}
