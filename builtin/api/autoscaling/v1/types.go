package v1

import (
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/scheme"
)

// GroupVersion is autoscaling/v1.
var GroupVersion = api.GroupVersion{Group: "autoscaling", Version: "v1"}

// Scale is the replica count of a scalable resource (its /scale subresource).
type Scale struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           ScaleSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         ScaleStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// ScaleSpec is the desired scale.
type ScaleSpec struct {
	Replicas int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
}

// ScaleStatus is the observed scale. Selector is a label query (in string form)
// over the pods counted in Replicas.
type ScaleStatus struct {
	Replicas int32  `json:"replicas" protobuf:"varint,1,opt,name=replicas"`
	Selector string `json:"selector,omitempty" protobuf:"bytes,2,opt,name=selector"`
}

// AddToScheme registers Scale and HorizontalPodAutoscaler in s under
// autoscaling/v1. Scale has no list type: it is only read and written through
// a resource's /scale subresource.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion, &Scale{}, &HorizontalPodAutoscaler{}, &HorizontalPodAutoscalerList{})
}
