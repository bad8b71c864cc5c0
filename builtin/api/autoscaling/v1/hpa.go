package v1

import (
	autoscalingv2 "github.com/converge-dev/converge/builtin/api/autoscaling/v2"
	"github.com/converge-dev/converge/framework/api"
)

// HorizontalPodAutoscaler is the autoscaling/v1 form of the autoscaler: a
// CPU utilization target only. It is stored as autoscaling/v2 (see
// Resources); what v1 cannot express travels in annotations.
type HorizontalPodAutoscaler struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           HorizontalPodAutoscalerSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         HorizontalPodAutoscalerStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// HorizontalPodAutoscalerList is a list of HorizontalPodAutoscalers.
type HorizontalPodAutoscalerList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []HorizontalPodAutoscaler `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// CrossVersionObjectReference names the scaled object.
type CrossVersionObjectReference = autoscalingv2.CrossVersionObjectReference

// HorizontalPodAutoscalerSpec is the desired autoscaling.
type HorizontalPodAutoscalerSpec struct {
	ScaleTargetRef                 CrossVersionObjectReference `json:"scaleTargetRef" protobuf:"bytes,1,opt,name=scaleTargetRef"`
	MinReplicas                    *int32                      `json:"minReplicas,omitempty" protobuf:"varint,2,opt,name=minReplicas"`
	MaxReplicas                    int32                       `json:"maxReplicas" protobuf:"varint,3,opt,name=maxReplicas"`
	TargetCPUUtilizationPercentage *int32                      `json:"targetCPUUtilizationPercentage,omitempty" protobuf:"varint,4,opt,name=targetCPUUtilizationPercentage"`
}

// HorizontalPodAutoscalerStatus is the observed state.
type HorizontalPodAutoscalerStatus struct {
	ObservedGeneration              *int64    `json:"observedGeneration,omitempty" protobuf:"varint,1,opt,name=observedGeneration"`
	LastScaleTime                   *api.Time `json:"lastScaleTime,omitempty" protobuf:"bytes,2,opt,name=lastScaleTime"`
	CurrentReplicas                 int32     `json:"currentReplicas" protobuf:"varint,3,opt,name=currentReplicas"`
	DesiredReplicas                 int32     `json:"desiredReplicas" protobuf:"varint,4,opt,name=desiredReplicas"`
	CurrentCPUUtilizationPercentage *int32    `json:"currentCPUUtilizationPercentage,omitempty" protobuf:"varint,5,opt,name=currentCPUUtilizationPercentage"`
}
