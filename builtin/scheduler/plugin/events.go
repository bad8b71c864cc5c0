package plugin

import corev1 "github.com/converge-dev/converge/builtin/api/core/v1"

// ActionType is a bit set of changes to an object.
type ActionType int64

// Action types; the Update* values refine Update.
const (
	Add ActionType = 1 << iota
	Delete
	UpdateNodeAllocatable
	UpdateNodeLabel
	UpdateNodeTaint
	UpdateNodeCondition
	UpdatePodLabel
	UpdatePodScaleDown
	UpdatePodTolerations
	UpdatePodSchedulingGatesEliminated
	// UpdatePodOther is any other pod update.
	UpdatePodOther

	// Update is any update.
	Update = UpdateNodeAllocatable | UpdateNodeLabel | UpdateNodeTaint | UpdateNodeCondition |
		UpdatePodLabel | UpdatePodScaleDown | UpdatePodTolerations | UpdatePodSchedulingGatesEliminated | UpdatePodOther
	// All is every action.
	All ActionType = 1<<iota - 1
)

// EventResource names the kind of object an event is about.
type EventResource string

// Event resources.
const (
	// Pod is a pod other than the one being scheduled (assigned pods).
	Pod EventResource = "Pod"
	// UnscheduledPod is an update of a pending pod itself.
	UnscheduledPod EventResource = "UnscheduledPod"
	Node           EventResource = "Node"
	// PersistentVolumeClaim is a claim added, updated or deleted.
	PersistentVolumeClaim EventResource = "PersistentVolumeClaim"
	// WildCard matches every resource.
	WildCard EventResource = "*"
)

// ClusterEvent is a change in the cluster that may make pods schedulable.
type ClusterEvent struct {
	Resource   EventResource
	ActionType ActionType
	// Label names the event in logs and metrics.
	Label string
}

// Match reports whether the registered event e covers the concrete event o.
func (e ClusterEvent) Match(o ClusterEvent) bool {
	return (e.Resource == WildCard || e.Resource == o.Resource) && e.ActionType&o.ActionType != 0
}

// QueueingHint is a plugin's verdict on whether an event may make a pod it
// rejected schedulable.
type QueueingHint int

// Queueing hints.
const (
	QueueSkip QueueingHint = iota
	Queue
)

// QueueingHintFn decides for one rejected pod and one event; oldObj/newObj
// are the objects of the event (nil for add/delete respectively).
type QueueingHintFn func(pod *corev1.Pod, oldObj, newObj any) (QueueingHint, error)

// ClusterEventWithHint is a registered event with an optional hint (nil means
// always Queue).
type ClusterEventWithHint struct {
	Event          ClusterEvent
	QueueingHintFn QueueingHintFn
}

// EnqueueExtensions is implemented by plugins that reject pods (PreEnqueue,
// PreFilter, Filter, Reserve, Permit) to say which events may make those pods
// schedulable again. A pod rejected by plugins that do not implement it is
// moved on any event.
type EnqueueExtensions interface {
	Plugin
	EventsToRegister() []ClusterEventWithHint
}
