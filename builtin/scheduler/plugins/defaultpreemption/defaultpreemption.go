package defaultpreemption

import (
	"context"
	"fmt"
	"math/rand/v2"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	policyv1 "github.com/converge-dev/converge/builtin/api/policy/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/cache"
)

// Name is the plugin's name in the registry and in configuration.
const Name = "DefaultPreemption"

// Messages and reasons, worded like kube-scheduler's.
const (
	// MsgNotHelpful is the status of nodes whose rejection preemption cannot
	// change (UnschedulableAndUnresolvable).
	MsgNotHelpful = "Preemption is not helpful for scheduling"
	// MsgNoVictims is the status of a node without lower-priority pods.
	MsgNoVictims = "No preemption victims found for incoming pod"
	// MsgPolicyNever refuses preemption by a pod with preemptionPolicy Never.
	MsgPolicyNever = "not eligible due to preemptionPolicy=Never."
	// MsgTerminatingOnNominated refuses preemption while a victim of an earlier
	// preemption is still terminating on the nominated node.
	MsgTerminatingOnNominated = "not eligible due to a terminating pod on the nominated node."
	// ReasonPreemptionByScheduler is the reason of a victim's DisruptionTarget
	// condition.
	ReasonPreemptionByScheduler = "PreemptionByScheduler"
)

// Args configure the plugin (Kubernetes' DefaultPreemptionArgs).
type Args struct {
	// MinCandidateNodesPercentage of the nodes to dry-run, in [0, 100].
	MinCandidateNodesPercentage int32 `json:"minCandidateNodesPercentage"`
	// MinCandidateNodesAbsolute is the least number of nodes to dry-run.
	MinCandidateNodesAbsolute int32 `json:"minCandidateNodesAbsolute"`
}

// handle is the part of plugin.Handle preemption uses.
type handle interface {
	plugin.PluginsRunner
	SnapshotSharedLister() plugin.SharedLister
	NominatedPodsForNode(nodeName string) []*plugin.PodInfo
	GetWaitingPod(uid string) plugin.WaitingPod
	EventRecorder() plugin.EventRecorder
}

// DefaultPreemption is the plugin.
type DefaultPreemption struct {
	args Args
	h    handle
	// pdbs lists the PodDisruptionBudgets (nil: none).
	pdbs func() []*policyv1.PodDisruptionBudget
	// offset picks where the dry run starts among n potential nodes.
	offset func(n int) int
	// api writes to the API server.
	api apiWriter
}

var _ plugin.PostFilterPlugin = (*DefaultPreemption)(nil)

// New is the plugin factory: args are Args (nil: 10% and 100). Budgets are
// read from h's PodDisruptionBudget informer (requested here); writes go
// through h.Client().
func New(_ context.Context, args any, h plugin.Handle) (plugin.Plugin, error) {
	a := Args{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}
	if err := plugin.DecodeArgs(args, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	if a.MinCandidateNodesPercentage < 0 || a.MinCandidateNodesPercentage > 100 {
		return nil, fmt.Errorf("%s: minCandidateNodesPercentage %d is not in the range [0, 100]", Name, a.MinCandidateNodesPercentage)
	}
	if a.MinCandidateNodesAbsolute < 0 {
		return nil, fmt.Errorf("%s: minCandidateNodesAbsolute %d must not be negative", Name, a.MinCandidateNodesAbsolute)
	}
	if a.MinCandidateNodesPercentage == 0 && a.MinCandidateNodesAbsolute == 0 {
		return nil, fmt.Errorf("%s: minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be zero", Name)
	}
	pl := &DefaultPreemption{args: a, h: h, offset: rand.IntN, api: clientWriter{h: h}}
	if inf := h.Informers(); inf != nil {
		pdbs, err := cache.InformerFor(inf, cache.InformerOptions[*policyv1.PodDisruptionBudget]{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
		pl.pdbs = pdbs.Store().List
	}
	return pl, nil
}

// Name implements plugin.Plugin.
func (pl *DefaultPreemption) Name() string { return Name }

// PostFilter tries to make room for pod by preempting lower-priority pods. On
// success it returns the node to nominate; otherwise a status whose message,
// prefixed "preemption: ", says why.
func (pl *DefaultPreemption) PostFilter(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, m plugin.NodeToStatusReader) (*plugin.PostFilterResult, *plugin.Status) {
	result, status := pl.preempt(ctx, state, pod, m)
	if msg := status.Message(); msg != "" {
		return result, plugin.NewStatus(status.Code(), "preemption: "+msg)
	}
	return result, status
}

func (pl *DefaultPreemption) preempt(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, m plugin.NodeToStatusReader) (*plugin.PostFilterResult, *plugin.Status) {
	lister := pl.h.SnapshotSharedLister().NodeInfos()
	if ok, msg := eligibleToPreempt(pod, m.Get(pod.Status.NominatedNodeName), lister); !ok {
		return nil, plugin.NewStatus(plugin.Unschedulable, msg)
	}
	allNodes, err := lister.List()
	if err != nil {
		return nil, plugin.AsStatus(err)
	}
	if len(allNodes) == 0 {
		return nil, plugin.AsStatus(fmt.Errorf("no nodes available"))
	}
	potential, err := m.NodesForStatusCode(lister, plugin.Unschedulable)
	if err != nil {
		return nil, plugin.AsStatus(err)
	}
	statuses := plugin.NewNodeToStatus(nil, nil)
	for _, n := range allNodes {
		statuses.Set(n.Node().Name, plugin.NewStatus(plugin.UnschedulableAndUnresolvable, MsgNotHelpful))
	}
	if len(potential) == 0 {
		// Preemption cannot help: drop a stale nomination.
		if pod.Status.NominatedNodeName != "" {
			if err := pl.api.clearNomination(ctx, pod); err != nil {
				return nil, plugin.AsStatus(err)
			}
		}
		return nil, fitError(pod, len(allNodes), statuses)
	}
	var pdbs []*policyv1.PodDisruptionBudget
	if pl.pdbs != nil {
		pdbs = pl.pdbs()
	}
	n := len(potential)
	candidates, err := pl.dryRun(ctx, state, pod, potential, pdbs, pl.offset(n), numCandidates(n, pl.args), statuses)
	if err != nil {
		return nil, plugin.AsStatus(err)
	}
	if len(candidates) == 0 {
		return nil, fitError(pod, len(allNodes), statuses)
	}
	best := pickOneNodeForPreemption(candidates)
	if s := pl.prepareCandidate(ctx, best, pod); !s.IsSuccess() {
		return nil, s
	}
	return plugin.NewPostFilterResultWithNominatedNode(best.node), plugin.NewStatus(plugin.Success)
}

func fitError(pod *corev1.Pod, numNodes int, statuses *plugin.NodeToStatus) *plugin.Status {
	fe := &plugin.FitError{Pod: pod, NumAllNodes: numNodes, Diagnosis: plugin.Diagnosis{NodeToStatus: statuses}}
	return plugin.NewStatus(plugin.Unschedulable, fe.Error())
}

// numCandidates is how many candidates without budget violations the dry run
// looks for among n potential nodes.
func numCandidates(n int, a Args) int {
	c := n * int(a.MinCandidateNodesPercentage) / 100
	c = max(c, int(a.MinCandidateNodesAbsolute))
	return min(c, n)
}

// eligibleToPreempt applies Kubernetes' PodEligibleToPreemptOthers.
func eligibleToPreempt(pod *corev1.Pod, nominatedStatus *plugin.Status, lister plugin.NodeInfoLister) (bool, string) {
	if p := pod.Spec.PreemptionPolicy; p != nil && *p == corev1.PreemptNever {
		return false, MsgPolicyNever
	}
	nominated := pod.Status.NominatedNodeName
	if nominated == "" {
		return true, ""
	}
	// A nominated node the filters now reject for good: preempt again.
	if nominatedStatus.Code() == plugin.UnschedulableAndUnresolvable {
		return true, ""
	}
	if ni, err := lister.Get(nominated); err == nil && ni != nil {
		prio := podPriority(pod)
		for _, p := range ni.Pods {
			if podPriority(p.Pod) < prio && terminatingByPreemption(p.Pod) {
				return false, MsgTerminatingOnNominated
			}
		}
	}
	return true, ""
}

// terminatingByPreemption: being deleted with DisruptionTarget True, reason
// PreemptionByScheduler.
func terminatingByPreemption(p *corev1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			return c.Status == corev1.ConditionTrue && c.Reason == ReasonPreemptionByScheduler
		}
	}
	return false
}
