package nodeaffinity

import (
	"context"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/framework"
	"github.com/converge-dev/converge/builtin/scheduler/nodeselector"
)

// Name is the plugin name.
const Name = "NodeAffinity"

// Kubernetes' rejection reasons.
const (
	ErrReasonPod                         = "node(s) didn't match Pod's node affinity/selector"
	errReasonConflict                    = "pod affinity terms conflict"
	ErrReasonEnforced                    = "node(s) didn't match scheduler-enforced node affinity"
	preScoreKey       framework.StateKey = "PreScore" + Name
)

type preScoreState []corev1.PreferredSchedulingTerm

func (s preScoreState) Clone() framework.StateData { return s }

// NodeAffinity implements PreFilter, Filter, PreScore and Score.
type NodeAffinity struct{}

var (
	_ framework.PreFilterPlugin   = NodeAffinity{}
	_ framework.FilterPlugin      = NodeAffinity{}
	_ framework.PreScorePlugin    = NodeAffinity{}
	_ framework.ScorePlugin       = NodeAffinity{}
	_ framework.EnqueueExtensions = NodeAffinity{}
)

// New is the plugin factory.
func New(context.Context, any, framework.Handle) (framework.Plugin, error) {
	return NodeAffinity{}, nil
}

// Name implements framework.Plugin.
func (NodeAffinity) Name() string { return Name }

func required(pod *corev1.Pod) *corev1.NodeSelector {
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// PreFilter implements framework.PreFilterPlugin: Skip when the pod has no
// node constraints; a node-name set when every term pins metadata.name In.
func (NodeAffinity) PreFilter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	req := required(pod)
	if req == nil && len(pod.Spec.NodeSelector) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	if req == nil {
		return nil, nil
	}
	names := map[string]struct{}{}
	for _, t := range req.NodeSelectorTerms {
		var termNames map[string]struct{}
		for _, f := range t.MatchFields {
			if f.Key != nodeselector.FieldMetadataName || f.Operator != corev1.NodeSelectorOpIn {
				continue
			}
			set := map[string]struct{}{}
			for _, v := range f.Values {
				if termNames == nil {
					set[v] = struct{}{}
				} else if _, ok := termNames[v]; ok {
					set[v] = struct{}{}
				}
			}
			termNames = set
		}
		if termNames == nil {
			// A term without a name restriction: all nodes are candidates.
			return nil, nil
		}
		for n := range termNames {
			names[n] = struct{}{}
		}
	}
	if len(names) == 0 && len(req.NodeSelectorTerms) > 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, errReasonConflict)
	}
	return &framework.PreFilterResult{NodeNames: names}, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (NodeAffinity) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter implements framework.FilterPlugin.
func (NodeAffinity) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	if !nodeselector.RequiredNodeAffinityMatches(pod, ni.Node()) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod)
	}
	return nil
}

// PreScore implements framework.PreScorePlugin; Skip without preferred terms.
func (NodeAffinity) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(preScoreKey, preScoreState(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution))
	return nil
}

// PreferredScore sums the weights of the matching preferred terms.
func PreferredScore(terms []corev1.PreferredSchedulingTerm, node *corev1.Node) int64 {
	var s int64
	for i := range terms {
		if terms[i].Weight != 0 && nodeselector.TermMatches(&terms[i].Preference, node) {
			s += int64(terms[i].Weight)
		}
	}
	return s
}

// Score implements framework.ScorePlugin.
func (NodeAffinity) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	terms, err := framework.ReadState[preScoreState](state, preScoreKey)
	if err != nil {
		if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
			terms = a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		}
	}
	return PreferredScore(terms, ni.Node()), nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (n NodeAffinity) ScoreExtensions() framework.ScoreExtensions { return n }

// NormalizeScore implements framework.ScoreExtensions.
func (NodeAffinity) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	return framework.DefaultNormalizeScore(framework.MaxNodeScore, false, scores)
}

// EventsToRegister implements framework.EnqueueExtensions.
func (NodeAffinity) EventsToRegister() []framework.ClusterEventWithHint {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}, QueueingHintFn: func(pod *corev1.Pod, _, newObj any) (framework.QueueingHint, error) {
			if n, ok := newObj.(*corev1.Node); ok && !nodeselector.RequiredNodeAffinityMatches(pod, n) {
				return framework.QueueSkip, nil
			}
			return framework.Queue, nil
		}},
	}
}
