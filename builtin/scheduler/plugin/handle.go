package plugin

import (
	"context"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
)

// NodeInfoLister reads the nodes of a snapshot.
type NodeInfoLister interface {
	// List returns every node that has a Node object.
	List() ([]*NodeInfo, error)
	// HavePodsWithAffinityList returns the nodes with at least one pod with
	// (anti-)affinity terms.
	HavePodsWithAffinityList() ([]*NodeInfo, error)
	// HavePodsWithRequiredAntiAffinityList returns the nodes with at least one
	// pod with required anti-affinity.
	HavePodsWithRequiredAntiAffinityList() ([]*NodeInfo, error)
	// Get returns one node or an error wrapping ErrNotFound.
	Get(nodeName string) (*NodeInfo, error)
}

// SharedLister is the immutable snapshot of one scheduling cycle.
type SharedLister interface {
	NodeInfos() NodeInfoLister
}

// Parallelizer runs work pieces on a bounded number of goroutines.
type Parallelizer interface {
	// Until calls work(ctx, i) for i in [0, pieces) and returns when all are
	// done or ctx is cancelled (remaining pieces are then not started).
	Until(ctx context.Context, pieces int, work func(ctx context.Context, i int), operation string)
}

// EventRecorder records Kubernetes events (implemented by record.Recorder).
type EventRecorder interface {
	Eventf(ctx context.Context, obj api.Object, eventType, reason, format string, args ...any)
}

// PodNominator tracks pods nominated to nodes by preemption, so that lower
// priority pods do not take the room freed for them.
type PodNominator interface {
	// AddNominatedPod records a nomination (ModeOverride) or keeps the pod's
	// status.nominatedNodeName (nil/ModeNoop).
	AddNominatedPod(pi *PodInfo, info *NominatingInfo)
	// DeleteNominatedPodIfExists forgets the pod's nomination.
	DeleteNominatedPodIfExists(pod *corev1.Pod)
	// NominatedPodsForNode returns the pods nominated to the node.
	NominatedPodsForNode(nodeName string) []*PodInfo
}

// PluginsRunner runs a profile's plugins; the preemption logic uses it to
// evaluate hypothetical node states.
type PluginsRunner interface {
	// RunFilterPlugins runs every Filter plugin on the node, stopping at the
	// first rejection.
	RunFilterPlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) *Status
	// RunFilterPluginsWithNominatedPods runs Filter as if the pods nominated
	// to the node with priority >= the pod's were on it (and then without
	// them), like kube-scheduler.
	RunFilterPluginsWithNominatedPods(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) *Status
	// RunPreFilterExtensionAddPod calls every PreFilterExtensions.AddPod.
	RunPreFilterExtensionAddPod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	// RunPreFilterExtensionRemovePod calls every PreFilterExtensions.RemovePod.
	RunPreFilterExtensionRemovePod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
}

// Handle is what a plugin factory receives: access to the cycle's snapshot,
// the API, events, the nominator, waiting pods and the plugin runner of its
// profile. Client and Informers may be nil in unit tests.
type Handle interface {
	PodNominator
	PluginsRunner
	// SnapshotSharedLister returns the snapshot of the current cycle.
	SnapshotSharedLister() SharedLister
	// Client returns the API client.
	Client() *client.Client
	// Informers returns the shared informers (for listers of other kinds, e.g.
	// PodDisruptionBudgets or PriorityClasses); started by the scheduler.
	Informers() *cache.SharedInformers
	// EventRecorder records events for this profile's scheduler name.
	EventRecorder() EventRecorder
	// Parallelizer runs per-node work in parallel.
	Parallelizer() Parallelizer
	// ProfileName returns the scheduler name of the profile.
	ProfileName() string
	// GetWaitingPod returns the pod waiting at Permit with this UID, or nil.
	GetWaitingPod(uid string) WaitingPod
	// IterateOverWaitingPods calls fn for every waiting pod.
	IterateOverWaitingPods(fn func(WaitingPod))
	// RejectWaitingPod rejects a waiting pod; false if none has this UID.
	RejectWaitingPod(uid string) bool
}
