package tainttoleration

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/builtin/scheduler/taints"
)

// Name is the plugin name.
const Name = "TaintToleration"

const preScoreKey plugin.StateKey = "PreScore" + Name

type preScoreState []corev1.Toleration

func (s preScoreState) Clone() plugin.StateData { return s }

// TaintToleration implements Filter, PreScore and Score.
type TaintToleration struct{}

var (
	_ plugin.FilterPlugin      = TaintToleration{}
	_ plugin.PreScorePlugin    = TaintToleration{}
	_ plugin.ScorePlugin       = TaintToleration{}
	_ plugin.EnqueueExtensions = TaintToleration{}
)

// New is the plugin factory.
func New(context.Context, any, plugin.Handle) (plugin.Plugin, error) {
	return TaintToleration{}, nil
}

// Name implements plugin.Plugin.
func (TaintToleration) Name() string { return Name }

// Filter implements plugin.FilterPlugin.
func (TaintToleration) Filter(_ context.Context, _ *plugin.CycleState, pod *corev1.Pod, ni *plugin.NodeInfo) *plugin.Status {
	taint, found := taints.FindMatchingUntoleratedTaint(ni.Taints(), pod.Spec.Tolerations, taints.DoNotScheduleTaintsFilter)
	if !found {
		return nil
	}
	return plugin.NewStatus(plugin.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value))
}

func preferNoScheduleTolerations(tolerations []corev1.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range tolerations {
		if t.Effect == "" || t.Effect == corev1.TaintEffectPreferNoSchedule {
			out = append(out, t)
		}
	}
	return out
}

// PreScore implements plugin.PreScorePlugin.
func (TaintToleration) PreScore(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, _ []*plugin.NodeInfo) *plugin.Status {
	state.Write(preScoreKey, preScoreState(preferNoScheduleTolerations(pod.Spec.Tolerations)))
	return nil
}

// CountIntolerable counts the PreferNoSchedule taints not tolerated.
func CountIntolerable(nodeTaints []corev1.Taint, tolerations []corev1.Toleration) int64 {
	var n int64
	for i := range nodeTaints {
		if nodeTaints[i].Effect != corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !taints.TolerationsTolerateTaint(tolerations, &nodeTaints[i]) {
			n++
		}
	}
	return n
}

// Score implements plugin.ScorePlugin: the raw score is the number of
// intolerable taints, reversed by NormalizeScore.
func (TaintToleration) Score(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, ni *plugin.NodeInfo) (int64, *plugin.Status) {
	tols, err := plugin.ReadState[preScoreState](state, preScoreKey)
	if err != nil {
		tols = preferNoScheduleTolerations(pod.Spec.Tolerations)
	}
	return CountIntolerable(ni.Taints(), tols), nil
}

// ScoreExtensions implements plugin.ScorePlugin.
func (t TaintToleration) ScoreExtensions() plugin.ScoreExtensions { return t }

// NormalizeScore implements plugin.ScoreExtensions.
func (TaintToleration) NormalizeScore(_ context.Context, _ *plugin.CycleState, _ *corev1.Pod, scores plugin.NodeScoreList) *plugin.Status {
	return plugin.DefaultNormalizeScore(plugin.MaxNodeScore, true, scores)
}

// EventsToRegister implements plugin.EnqueueExtensions.
func (TaintToleration) EventsToRegister() []plugin.ClusterEventWithHint {
	return []plugin.ClusterEventWithHint{
		{Event: plugin.ClusterEvent{Resource: plugin.Node, ActionType: plugin.Add | plugin.UpdateNodeTaint}, QueueingHintFn: func(pod *corev1.Pod, _, newObj any) (plugin.QueueingHint, error) {
			if n, ok := newObj.(*corev1.Node); ok {
				if _, found := taints.FindMatchingUntoleratedTaint(n.Spec.Taints, pod.Spec.Tolerations, taints.DoNotScheduleTaintsFilter); found {
					return plugin.QueueSkip, nil
				}
			}
			return plugin.Queue, nil
		}},
		{Event: plugin.ClusterEvent{Resource: plugin.UnscheduledPod, ActionType: plugin.UpdatePodTolerations}},
	}
}
