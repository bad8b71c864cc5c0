package v1

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// GroupVersion is scheduling.k8s.io/v1.
var GroupVersion = api.GroupVersion{Group: "scheduling.k8s.io", Version: "v1"}

// Priority bounds and the system classes, as in Kubernetes.
const (
	// HighestUserDefinablePriority is the largest value of a class whose name
	// does not start with SystemPriorityClassPrefix.
	HighestUserDefinablePriority int32 = 1000000000
	// SystemCriticalPriority is the value of system-cluster-critical.
	SystemCriticalPriority int32 = 2 * HighestUserDefinablePriority
	// SystemPriorityClassPrefix is reserved for the system classes.
	SystemPriorityClassPrefix = "system-"
	// SystemClusterCritical is the class of pods the cluster needs, which may
	// move to another node.
	SystemClusterCritical = SystemPriorityClassPrefix + "cluster-critical"
	// SystemNodeCritical is the class of pods a node needs, which must not move.
	SystemNodeCritical = SystemPriorityClassPrefix + "node-critical"
	// DefaultPriorityWhenNoDefaultClassExists is the priority of a pod without a
	// priorityClassName when no class is globalDefault.
	DefaultPriorityWhenNoDefaultClassExists int32 = 0
)

// PriorityClass maps a priority class name to the integer priority of the pods
// that name it in spec.priorityClassName.
type PriorityClass struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Value is the priority of the class's pods; higher is more important.
	Value int32 `json:"value" protobuf:"bytes,2,opt,name=value"`
	// GlobalDefault makes the class the one of pods without a priorityClassName.
	// If several classes say so, the one with the lowest value wins.
	GlobalDefault bool `json:"globalDefault,omitempty" protobuf:"bytes,3,opt,name=globalDefault"`
	// Description says when to use the class.
	Description string `json:"description,omitempty" protobuf:"bytes,4,opt,name=description"`
	// PreemptionPolicy of the class's pods; defaults to PreemptLowerPriority.
	PreemptionPolicy *corev1.PreemptionPolicy `json:"preemptionPolicy,omitempty" protobuf:"bytes,5,opt,name=preemptionPolicy"`
}

// PriorityClassList is a list of PriorityClasses.
type PriorityClassList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []PriorityClass `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// DefaultPriorityClass sets preemptionPolicy to PreemptLowerPriority when unset.
func DefaultPriorityClass(pc *PriorityClass) {
	if pc.PreemptionPolicy == nil {
		pc.PreemptionPolicy = api.Ptr(corev1.PreemptLowerPriority)
	}
}

// SystemPriorityClasses returns the classes every cluster has, freshly built:
// system-node-critical (2000001000) and system-cluster-critical (2000000000).
// The control plane creates them on start.
func SystemPriorityClasses() []*PriorityClass {
	mk := func(name string, value int32, desc string) *PriorityClass {
		return &PriorityClass{
			TypeMeta:         api.TypeMeta{APIVersion: GroupVersion.String(), Kind: "PriorityClass"},
			ObjectMeta:       api.ObjectMeta{Name: name},
			Value:            value,
			Description:      desc,
			PreemptionPolicy: api.Ptr(corev1.PreemptLowerPriority),
		}
	}
	return []*PriorityClass{
		mk(SystemNodeCritical, SystemCriticalPriority+1000, "Used for system critical pods that must not be moved from their current node."),
		mk(SystemClusterCritical, SystemCriticalPriority, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
	}
}
