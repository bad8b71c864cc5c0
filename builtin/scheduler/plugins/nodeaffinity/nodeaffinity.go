package nodeaffinity

import (
	"context"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/nodeselector"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
)

// Name is the plugin name.
const Name = "NodeAffinity"

// Kubernetes' rejection reasons.
const (
	ErrReasonPod                      = "node(s) didn't match Pod's node affinity/selector"
	errReasonConflict                 = "pod affinity terms conflict"
	ErrReasonEnforced                 = "node(s) didn't match scheduler-enforced node affinity"
	preScoreKey       plugin.StateKey = "PreScore" + Name
)

type preScoreState []corev1.PreferredSchedulingTerm

func (s preScoreState) Clone() plugin.StateData { return s }

// NodeAffinity implements PreFilter, Filter, PreScore and Score.
type NodeAffinity struct{}

var (
	_ plugin.PreFilterPlugin   = NodeAffinity{}
	_ plugin.FilterPlugin      = NodeAffinity{}
	_ plugin.PreScorePlugin    = NodeAffinity{}
	_ plugin.ScorePlugin       = NodeAffinity{}
	_ plugin.EnqueueExtensions = NodeAffinity{}
)

// New is the plugin factory.
func New(context.Context, any, plugin.Handle) (plugin.Plugin, error) {
	return NodeAffinity{}, nil
}

// Name implements plugin.Plugin.
func (NodeAffinity) Name() string { return Name }

func required(pod *corev1.Pod) *corev1.NodeSelector {
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// PreFilter implements plugin.PreFilterPlugin: Skip when the pod has no
// node constraints; a node-name set when every term pins metadata.name In.
func (NodeAffinity) PreFilter(_ context.Context, _ *plugin.CycleState, pod *corev1.Pod, _ []*plugin.NodeInfo) (*plugin.PreFilterResult, *plugin.Status) {
	req := required(pod)
	if req == nil && len(pod.Spec.NodeSelector) == 0 {
		return nil, plugin.NewStatus(plugin.Skip)
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
		return nil, plugin.NewStatus(plugin.UnschedulableAndUnresolvable, errReasonConflict)
	}
	return &plugin.PreFilterResult{NodeNames: names}, nil
}

// PreFilterExtensions implements plugin.PreFilterPlugin.
func (NodeAffinity) PreFilterExtensions() plugin.PreFilterExtensions { return nil }

// Filter implements plugin.FilterPlugin.
func (NodeAffinity) Filter(_ context.Context, _ *plugin.CycleState, pod *corev1.Pod, ni *plugin.NodeInfo) *plugin.Status {
	if !nodeselector.RequiredNodeAffinityMatches(pod, ni.Node()) {
		return plugin.NewStatus(plugin.UnschedulableAndUnresolvable, ErrReasonPod)
	}
	return nil
}

// PreScore implements plugin.PreScorePlugin; Skip without preferred terms.
func (NodeAffinity) PreScore(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, _ []*plugin.NodeInfo) *plugin.Status {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return plugin.NewStatus(plugin.Skip)
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

// Score implements plugin.ScorePlugin.
func (NodeAffinity) Score(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, ni *plugin.NodeInfo) (int64, *plugin.Status) {
	terms, err := plugin.ReadState[preScoreState](state, preScoreKey)
	if err != nil {
		if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
			terms = a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		}
	}
	return PreferredScore(terms, ni.Node()), nil
}

// ScoreExtensions implements plugin.ScorePlugin.
func (n NodeAffinity) ScoreExtensions() plugin.ScoreExtensions { return n }

// NormalizeScore implements plugin.ScoreExtensions.
func (NodeAffinity) NormalizeScore(_ context.Context, _ *plugin.CycleState, _ *corev1.Pod, scores plugin.NodeScoreList) *plugin.Status {
	return plugin.DefaultNormalizeScore(plugin.MaxNodeScore, false, scores)
}

// EventsToRegister implements plugin.EnqueueExtensions.
func (NodeAffinity) EventsToRegister() []plugin.ClusterEventWithHint {
	return []plugin.ClusterEventWithHint{
		{Event: plugin.ClusterEvent{Resource: plugin.Node, ActionType: plugin.Add | plugin.UpdateNodeLabel}, QueueingHintFn: func(pod *corev1.Pod, _, newObj any) (plugin.QueueingHint, error) {
			if n, ok := newObj.(*corev1.Node); ok && !nodeselector.RequiredNodeAffinityMatches(pod, n) {
				return plugin.QueueSkip, nil
			}
			return plugin.Queue, nil
		}},
	}
}
