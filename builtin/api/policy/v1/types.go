package v1

import "github.com/converge-dev/converge/framework/api"

// GroupVersion is policy/v1.
var GroupVersion = api.GroupVersion{Group: "policy", Version: "v1"}

// DisruptionBudgetCause is the StatusCause type of an eviction refused by a budget.
const DisruptionBudgetCause = "DisruptionBudget"

// PodDisruptionBudget limits how many pods of a set may be down at once through
// voluntary disruptions (evictions).
type PodDisruptionBudget struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           PodDisruptionBudgetSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         PodDisruptionBudgetStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// PodDisruptionBudgetSpec is the desired budget. At most one of MinAvailable and
// MaxUnavailable may be set.
type PodDisruptionBudgetSpec struct {
	MinAvailable               *api.IntOrString                `json:"minAvailable,omitempty" protobuf:"bytes,1,opt,name=minAvailable"`
	Selector                   *api.LabelSelector              `json:"selector,omitempty" patchStrategy:"replace" protobuf:"bytes,2,opt,name=selector"`
	MaxUnavailable             *api.IntOrString                `json:"maxUnavailable,omitempty" protobuf:"bytes,3,opt,name=maxUnavailable"`
	UnhealthyPodEvictionPolicy *UnhealthyPodEvictionPolicyType `json:"unhealthyPodEvictionPolicy,omitempty" protobuf:"bytes,4,opt,name=unhealthyPodEvictionPolicy"`
}

// UnhealthyPodEvictionPolicyType says when unhealthy pods may be evicted.
type UnhealthyPodEvictionPolicyType string

// Unhealthy pod eviction policies.
const (
	IfHealthyBudget UnhealthyPodEvictionPolicyType = "IfHealthyBudget"
	AlwaysAllow     UnhealthyPodEvictionPolicyType = "AlwaysAllow"
)

// PodDisruptionBudgetStatus is the observed state of a budget, written by the
// disruption controller.
type PodDisruptionBudgetStatus struct {
	ObservedGeneration int64               `json:"observedGeneration,omitempty" protobuf:"varint,1,opt,name=observedGeneration"`
	DisruptedPods      map[string]api.Time `json:"disruptedPods,omitempty" protobuf:"bytes,2,rep,name=disruptedPods" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	DisruptionsAllowed int32               `json:"disruptionsAllowed" protobuf:"varint,3,opt,name=disruptionsAllowed"`
	CurrentHealthy     int32               `json:"currentHealthy" protobuf:"varint,4,opt,name=currentHealthy"`
	DesiredHealthy     int32               `json:"desiredHealthy" protobuf:"varint,5,opt,name=desiredHealthy"`
	ExpectedPods       int32               `json:"expectedPods" protobuf:"varint,6,opt,name=expectedPods"`
	Conditions         []api.Condition     `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,7,rep,name=conditions"`
}

// Condition types and reasons of a PodDisruptionBudget.
const (
	DisruptionAllowedCondition = "DisruptionAllowed"
	SyncFailedReason           = "SyncFailed"
	SufficientPodsReason       = "SufficientPods"
	InsufficientPodsReason     = "InsufficientPods"
)

// PodDisruptionBudgetList is a list of PodDisruptionBudgets.
type PodDisruptionBudgetList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []PodDisruptionBudget `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// Eviction asks for a pod to be deleted subject to disruption budgets; it is
// POSTed to pods/{name}/eviction.
type Eviction struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	DeleteOptions  *api.DeleteOptions `json:"deleteOptions,omitempty" protobuf:"bytes,2,opt,name=deleteOptions"`
}
