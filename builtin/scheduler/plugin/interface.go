package plugin

import (
	"context"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// Score bounds: after NormalizeScore every plugin's score is in [MinNodeScore,
// MaxNodeScore]; it is then multiplied by the plugin's weight.
const (
	MinNodeScore int64 = 0
	MaxNodeScore int64 = 100
	// MaxTotalScore bounds the weighted sum over plugins.
	MaxTotalScore int64 = 1 << 62
)

// Plugin is the base of every plugin.
type Plugin interface {
	// Name is unique within a profile and is what configuration refers to.
	Name() string
}

// PreEnqueuePlugin decides whether a pod may enter the active queue at all
// (e.g. SchedulingGates). A non-success status keeps the pod out of the
// active queue until an update to it re-runs the check.
type PreEnqueuePlugin interface {
	Plugin
	PreEnqueue(ctx context.Context, pod *corev1.Pod) *Status
}

// PreFilterResult optionally narrows the nodes to evaluate.
type PreFilterResult struct {
	// NodeNames, when non-nil, is the only set of nodes worth filtering.
	NodeNames map[string]struct{}
}

// AllNodes reports whether the result does not narrow the nodes.
func (r *PreFilterResult) AllNodes() bool { return r == nil || r.NodeNames == nil }

// Merge intersects two results.
func (r *PreFilterResult) Merge(o *PreFilterResult) *PreFilterResult {
	if r.AllNodes() {
		return o
	}
	if o.AllNodes() {
		return r
	}
	out := map[string]struct{}{}
	for n := range r.NodeNames {
		if _, ok := o.NodeNames[n]; ok {
			out[n] = struct{}{}
		}
	}
	return &PreFilterResult{NodeNames: out}
}

// PreFilterPlugin runs once per cycle before Filter, to pre-compute state
// (written to CycleState) or reject the pod early. Returning Skip skips the
// plugin's Filter for this cycle. A rejection here rejects the pod on all
// nodes, with the status message as the "0/N nodes are available" reason.
type PreFilterPlugin interface {
	Plugin
	PreFilter(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) (*PreFilterResult, *Status)
	// PreFilterExtensions returns nil if the plugin has no AddPod/RemovePod.
	PreFilterExtensions() PreFilterExtensions
}

// PreFilterExtensions update the PreFilter state incrementally when the
// preemption logic simulates adding or removing a pod on a node; nodeInfo is a
// private copy.
type PreFilterExtensions interface {
	AddPod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RemovePod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
}

// FilterPlugin decides whether the pod can run on one node. It runs
// concurrently for different nodes. Rejections are Unschedulable (preemption
// may help) or UnschedulableAndUnresolvable, with Kubernetes' reason wording.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) *Status
}

// NominatingMode says how a PostFilterResult's nomination is applied.
type NominatingMode int

// Nominating modes.
const (
	// ModeNoop leaves the pod's nominated node unchanged.
	ModeNoop NominatingMode = iota
	// ModeOverride sets (or with an empty name clears) the nominated node.
	ModeOverride
)

// NominatingInfo carries a nomination.
type NominatingInfo struct {
	NominatedNodeName string
	NominatingMode    NominatingMode
}

// Mode returns the mode, ModeNoop for nil.
func (n *NominatingInfo) Mode() NominatingMode {
	if n == nil {
		return ModeNoop
	}
	return n.NominatingMode
}

// PostFilterResult is what a PostFilter plugin proposes.
type PostFilterResult struct {
	*NominatingInfo
}

// NewPostFilterResultWithNominatedNode returns a result nominating a node ("" clears).
func NewPostFilterResultWithNominatedNode(name string) *PostFilterResult {
	return &PostFilterResult{NominatingInfo: &NominatingInfo{NominatedNodeName: name, NominatingMode: ModeOverride}}
}

// PostFilterPlugin runs when no node passed Filter (e.g. preemption). The
// first plugin returning Success ends the chain; its status message (for a
// failure) is appended to the FailedScheduling summary.
type PostFilterPlugin interface {
	Plugin
	PostFilter(ctx context.Context, state *CycleState, pod *corev1.Pod, filteredNodeStatusMap NodeToStatusReader) (*PostFilterResult, *Status)
}

// PreScorePlugin runs once per cycle with the feasible nodes before Score;
// Skip skips the plugin's Score.
type PreScorePlugin interface {
	Plugin
	PreScore(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) *Status
}

// NodeScore is a node's score.
type NodeScore struct {
	Name  string
	Score int64
}

// NodeScoreList is the scores of one plugin over the feasible nodes.
type NodeScoreList []NodeScore

// ScoreExtensions normalise a plugin's raw scores to [MinNodeScore, MaxNodeScore].
type ScoreExtensions interface {
	NormalizeScore(ctx context.Context, state *CycleState, pod *corev1.Pod, scores NodeScoreList) *Status
}

// ScorePlugin ranks feasible nodes. Score runs concurrently for different
// nodes; without ScoreExtensions the scores must already be in range.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) (int64, *Status)
	// ScoreExtensions returns nil if the plugin does not normalise.
	ScoreExtensions() ScoreExtensions
}

// ReservePlugin is told when the pod is assumed on a node (Reserve) and when
// that is undone because a later step failed (Unreserve, which must be
// idempotent and must not fail).
type ReservePlugin interface {
	Plugin
	Reserve(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status
	Unreserve(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string)
}

// PermitPlugin approves, rejects or delays (Wait with a timeout) the binding.
type PermitPlugin interface {
	Plugin
	Permit(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) (*Status, time.Duration)
}

// PreBindPlugin runs in the binding goroutine before Bind.
type PreBindPlugin interface {
	Plugin
	PreBind(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status
}

// BindPlugin binds the pod; Skip passes to the next binder.
type BindPlugin interface {
	Plugin
	Bind(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status
}

// PostBindPlugin is informed after a successful bind.
type PostBindPlugin interface {
	Plugin
	PostBind(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string)
}

// WaitingPod is a pod held at Permit.
type WaitingPod interface {
	// GetPod returns the pod.
	GetPod() *corev1.Pod
	// GetPendingPlugins returns the plugins that have not yet allowed it.
	GetPendingPlugins() []string
	// Allow records the plugin's approval; the pod proceeds when all approved.
	Allow(pluginName string)
	// Reject rejects the pod with a message.
	Reject(pluginName, msg string)
}
