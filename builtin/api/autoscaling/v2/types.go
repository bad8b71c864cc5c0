package v2

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// GroupVersion is autoscaling/v2.
var GroupVersion = api.GroupVersion{Group: "autoscaling", Version: "v2"}

// HorizontalPodAutoscaler scales a workload's replicas (through its scale
// subresource) to keep metrics at their targets.
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

// HorizontalPodAutoscalerSpec is the desired autoscaling.
type HorizontalPodAutoscalerSpec struct {
	ScaleTargetRef CrossVersionObjectReference      `json:"scaleTargetRef" protobuf:"bytes,1,opt,name=scaleTargetRef"`
	MinReplicas    *int32                           `json:"minReplicas,omitempty" protobuf:"varint,2,opt,name=minReplicas"`
	MaxReplicas    int32                            `json:"maxReplicas" protobuf:"varint,3,opt,name=maxReplicas"`
	Metrics        []MetricSpec                     `json:"metrics,omitempty" protobuf:"bytes,4,rep,name=metrics"`
	Behavior       *HorizontalPodAutoscalerBehavior `json:"behavior,omitempty" protobuf:"bytes,5,opt,name=behavior"`
}

// CrossVersionObjectReference names an object of any group and version.
type CrossVersionObjectReference struct {
	Kind       string `json:"kind" protobuf:"bytes,1,opt,name=kind"`
	Name       string `json:"name" protobuf:"bytes,2,opt,name=name"`
	APIVersion string `json:"apiVersion,omitempty" protobuf:"bytes,3,opt,name=apiVersion"`
}

// MetricSourceType is the kind of a metric source.
type MetricSourceType string

// Metric source types.
const (
	ObjectMetricSourceType            MetricSourceType = "Object"
	PodsMetricSourceType              MetricSourceType = "Pods"
	ResourceMetricSourceType          MetricSourceType = "Resource"
	ContainerResourceMetricSourceType MetricSourceType = "ContainerResource"
	ExternalMetricSourceType          MetricSourceType = "External"
)

// MetricSpec is one metric to scale on; the field named by Type is set.
type MetricSpec struct {
	Type              MetricSourceType               `json:"type" protobuf:"bytes,1,name=type"`
	Object            *ObjectMetricSource            `json:"object,omitempty" protobuf:"bytes,2,opt,name=object"`
	Pods              *PodsMetricSource              `json:"pods,omitempty" protobuf:"bytes,3,opt,name=pods"`
	Resource          *ResourceMetricSource          `json:"resource,omitempty" protobuf:"bytes,4,opt,name=resource"`
	ContainerResource *ContainerResourceMetricSource `json:"containerResource,omitempty" protobuf:"bytes,7,opt,name=containerResource"`
	External          *ExternalMetricSource          `json:"external,omitempty" protobuf:"bytes,5,opt,name=external"`
}

// HorizontalPodAutoscalerBehavior configures scaling in each direction.
type HorizontalPodAutoscalerBehavior struct {
	ScaleUp   *HPAScalingRules `json:"scaleUp,omitempty" protobuf:"bytes,1,opt,name=scaleUp"`
	ScaleDown *HPAScalingRules `json:"scaleDown,omitempty" protobuf:"bytes,2,opt,name=scaleDown"`
}

// ScalingPolicySelect chooses among the policies' limits.
type ScalingPolicySelect string

// Policy selections.
const (
	MaxChangePolicySelect ScalingPolicySelect = "Max"
	MinChangePolicySelect ScalingPolicySelect = "Min"
	DisabledPolicySelect  ScalingPolicySelect = "Disabled"
)

// HPAScalingRules limit the rate of change in one direction and stabilize
// recommendations over a window.
type HPAScalingRules struct {
	StabilizationWindowSeconds *int32               `json:"stabilizationWindowSeconds,omitempty" protobuf:"varint,3,opt,name=stabilizationWindowSeconds"`
	SelectPolicy               *ScalingPolicySelect `json:"selectPolicy,omitempty" protobuf:"bytes,1,opt,name=selectPolicy"`
	Policies                   []HPAScalingPolicy   `json:"policies,omitempty" protobuf:"bytes,2,rep,name=policies"`
	Tolerance                  *api.Quantity        `json:"tolerance,omitempty" protobuf:"bytes,4,opt,name=tolerance"`
}

// HPAScalingPolicyType is the unit of a policy's Value.
type HPAScalingPolicyType string

// Policy types.
const (
	PodsScalingPolicy    HPAScalingPolicyType = "Pods"
	PercentScalingPolicy HPAScalingPolicyType = "Percent"
)

// HPAScalingPolicy allows a change of Value pods (or percent) per PeriodSeconds.
type HPAScalingPolicy struct {
	Type          HPAScalingPolicyType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=HPAScalingPolicyType"`
	Value         int32                `json:"value" protobuf:"varint,2,opt,name=value"`
	PeriodSeconds int32                `json:"periodSeconds" protobuf:"varint,3,opt,name=periodSeconds"`
}

// ObjectMetricSource is a metric of another object.
type ObjectMetricSource struct {
	DescribedObject CrossVersionObjectReference `json:"describedObject" protobuf:"bytes,1,name=describedObject"`
	Target          MetricTarget                `json:"target" protobuf:"bytes,2,name=target"`
	Metric          MetricIdentifier            `json:"metric" protobuf:"bytes,3,name=metric"`
}

// PodsMetricSource is a per-pod custom metric averaged over the target's pods.
type PodsMetricSource struct {
	Metric MetricIdentifier `json:"metric" protobuf:"bytes,1,name=metric"`
	Target MetricTarget     `json:"target" protobuf:"bytes,2,name=target"`
}

// ResourceMetricSource is a resource (cpu, memory) of the target's pods, as
// metrics.k8s.io reports it, summed over each pod's containers.
type ResourceMetricSource struct {
	Name   corev1.ResourceName `json:"name" protobuf:"bytes,1,name=name"`
	Target MetricTarget        `json:"target" protobuf:"bytes,2,name=target"`
}

// ContainerResourceMetricSource is a resource of one container of the
// target's pods.
type ContainerResourceMetricSource struct {
	Name      corev1.ResourceName `json:"name" protobuf:"bytes,1,name=name"`
	Target    MetricTarget        `json:"target" protobuf:"bytes,2,name=target"`
	Container string              `json:"container" protobuf:"bytes,3,opt,name=container"`
}

// ExternalMetricSource is a metric not tied to any Kubernetes object.
type ExternalMetricSource struct {
	Metric MetricIdentifier `json:"metric" protobuf:"bytes,1,name=metric"`
	Target MetricTarget     `json:"target" protobuf:"bytes,2,name=target"`
}

// MetricIdentifier names a custom or external metric.
type MetricIdentifier struct {
	Name     string             `json:"name" protobuf:"bytes,1,name=name"`
	Selector *api.LabelSelector `json:"selector,omitempty" protobuf:"bytes,2,name=selector"`
}

// MetricTargetType is the kind of a target value.
type MetricTargetType string

// Target types.
const (
	UtilizationMetricType  MetricTargetType = "Utilization"
	ValueMetricType        MetricTargetType = "Value"
	AverageValueMetricType MetricTargetType = "AverageValue"
)

// MetricTarget is a metric's target: a total Value, a per-pod AverageValue,
// or an AverageUtilization percentage of the pods' requests.
type MetricTarget struct {
	Type               MetricTargetType `json:"type" protobuf:"bytes,1,name=type"`
	Value              *api.Quantity    `json:"value,omitempty" protobuf:"bytes,2,opt,name=value"`
	AverageValue       *api.Quantity    `json:"averageValue,omitempty" protobuf:"bytes,3,opt,name=averageValue"`
	AverageUtilization *int32           `json:"averageUtilization,omitempty" protobuf:"varint,4,opt,name=averageUtilization"`
}

// HorizontalPodAutoscalerStatus is the observed state of the autoscaler.
type HorizontalPodAutoscalerStatus struct {
	ObservedGeneration *int64                             `json:"observedGeneration,omitempty" protobuf:"varint,1,opt,name=observedGeneration"`
	LastScaleTime      *api.Time                          `json:"lastScaleTime,omitempty" protobuf:"bytes,2,opt,name=lastScaleTime"`
	CurrentReplicas    int32                              `json:"currentReplicas,omitempty" protobuf:"varint,3,opt,name=currentReplicas"`
	DesiredReplicas    int32                              `json:"desiredReplicas" protobuf:"varint,4,opt,name=desiredReplicas"`
	CurrentMetrics     []MetricStatus                     `json:"currentMetrics" protobuf:"bytes,5,rep,name=currentMetrics"`
	Conditions         []HorizontalPodAutoscalerCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,6,rep,name=conditions"`
}

// HorizontalPodAutoscalerConditionType names a condition.
type HorizontalPodAutoscalerConditionType string

// Condition types.
const (
	// ScalingActive: the autoscaler can compute a replica count (metrics
	// work, the target is not scaled to zero).
	ScalingActive HorizontalPodAutoscalerConditionType = "ScalingActive"
	// AbleToScale: the autoscaler can read and write the target's scale.
	AbleToScale HorizontalPodAutoscalerConditionType = "AbleToScale"
	// ScalingLimited: the desired count was capped by min/max replicas or a
	// rate limit.
	ScalingLimited HorizontalPodAutoscalerConditionType = "ScalingLimited"
)

// HorizontalPodAutoscalerCondition is one condition of the autoscaler.
type HorizontalPodAutoscalerCondition struct {
	Type               HorizontalPodAutoscalerConditionType `json:"type" protobuf:"bytes,1,name=type"`
	Status             corev1.ConditionStatus               `json:"status" protobuf:"bytes,2,name=status"`
	LastTransitionTime api.Time                             `json:"lastTransitionTime,omitzero" protobuf:"bytes,3,opt,name=lastTransitionTime"`
	Reason             string                               `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	Message            string                               `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
}

// MetricStatus is one metric's current value; the field named by Type is set.
type MetricStatus struct {
	Type              MetricSourceType               `json:"type" protobuf:"bytes,1,name=type"`
	Object            *ObjectMetricStatus            `json:"object,omitempty" protobuf:"bytes,2,opt,name=object"`
	Pods              *PodsMetricStatus              `json:"pods,omitempty" protobuf:"bytes,3,opt,name=pods"`
	Resource          *ResourceMetricStatus          `json:"resource,omitempty" protobuf:"bytes,4,opt,name=resource"`
	ContainerResource *ContainerResourceMetricStatus `json:"containerResource,omitempty" protobuf:"bytes,7,opt,name=containerResource"`
	External          *ExternalMetricStatus          `json:"external,omitempty" protobuf:"bytes,5,opt,name=external"`
}

// ObjectMetricStatus is the current value of an object metric.
type ObjectMetricStatus struct {
	Metric          MetricIdentifier            `json:"metric" protobuf:"bytes,1,name=metric"`
	Current         MetricValueStatus           `json:"current" protobuf:"bytes,2,name=current"`
	DescribedObject CrossVersionObjectReference `json:"describedObject" protobuf:"bytes,3,name=describedObject"`
}

// PodsMetricStatus is the current value of a pods metric.
type PodsMetricStatus struct {
	Metric  MetricIdentifier  `json:"metric" protobuf:"bytes,1,name=metric"`
	Current MetricValueStatus `json:"current" protobuf:"bytes,2,name=current"`
}

// ResourceMetricStatus is the current value of a resource metric.
type ResourceMetricStatus struct {
	Name    corev1.ResourceName `json:"name" protobuf:"bytes,1,name=name"`
	Current MetricValueStatus   `json:"current" protobuf:"bytes,2,name=current"`
}

// ContainerResourceMetricStatus is the current value of a container
// resource metric.
type ContainerResourceMetricStatus struct {
	Name      corev1.ResourceName `json:"name" protobuf:"bytes,1,name=name"`
	Current   MetricValueStatus   `json:"current" protobuf:"bytes,2,name=current"`
	Container string              `json:"container" protobuf:"bytes,3,opt,name=container"`
}

// ExternalMetricStatus is the current value of an external metric.
type ExternalMetricStatus struct {
	Metric  MetricIdentifier  `json:"metric" protobuf:"bytes,1,name=metric"`
	Current MetricValueStatus `json:"current" protobuf:"bytes,2,name=current"`
}

// MetricValueStatus is a metric's current value.
type MetricValueStatus struct {
	Value              *api.Quantity `json:"value,omitempty" protobuf:"bytes,1,opt,name=value"`
	AverageValue       *api.Quantity `json:"averageValue,omitempty" protobuf:"bytes,2,opt,name=averageValue"`
	AverageUtilization *int32        `json:"averageUtilization,omitempty" protobuf:"varint,3,opt,name=averageUtilization"`
}
