package tainttoleration

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/framework"
	"github.com/converge-dev/converge/builtin/scheduler/taints"
)

// Name is the plugin name.
const Name = "TaintToleration"

const preScoreKey framework.StateKey = "PreScore" + Name

type preScoreState []corev1.Toleration

func (s preScoreState) Clone() framework.StateData { return s }

// TaintToleration implements Filter, PreScore and Score.
type TaintToleration struct{}

var (
	_ framework.FilterPlugin      = TaintToleration{}
	_ framework.PreScorePlugin    = TaintToleration{}
	_ framework.ScorePlugin       = TaintToleration{}
	_ framework.EnqueueExtensions = TaintToleration{}
)

// New is the plugin factory.
func New(context.Context, any, framework.Handle) (framework.Plugin, error) {
	return TaintToleration{}, nil
}

// Name implements framework.Plugin.
func (TaintToleration) Name() string { return Name }

// Filter implements framework.FilterPlugin.
func (TaintToleration) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	taint, found := taints.FindMatchingUntoleratedTaint(ni.Taints(), pod.Spec.Tolerations, taints.DoNotScheduleTaintsFilter)
	if !found {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value))
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

// PreScore implements framework.PreScorePlugin.
func (TaintToleration) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
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

// Score implements framework.ScorePlugin: the raw score is the number of
// intolerable taints, reversed by NormalizeScore.
func (TaintToleration) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	tols, err := framework.ReadState[preScoreState](state, preScoreKey)
	if err != nil {
		tols = preferNoScheduleTolerations(pod.Spec.Tolerations)
	}
	return CountIntolerable(ni.Taints(), tols), nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (t TaintToleration) ScoreExtensions() framework.ScoreExtensions { return t }

// NormalizeScore implements framework.ScoreExtensions.
func (TaintToleration) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	return framework.DefaultNormalizeScore(framework.MaxNodeScore, true, scores)
}

// EventsToRegister implements framework.EnqueueExtensions.
func (TaintToleration) EventsToRegister() []framework.ClusterEventWithHint {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}, QueueingHintFn: func(pod *corev1.Pod, _, newObj any) (framework.QueueingHint, error) {
			if n, ok := newObj.(*corev1.Node); ok {
				if _, found := taints.FindMatchingUntoleratedTaint(n.Spec.Taints, pod.Spec.Tolerations, taints.DoNotScheduleTaintsFilter); found {
					return framework.QueueSkip, nil
				}
			}
			return framework.Queue, nil
		}},
		{Event: framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.UpdatePodTolerations}},
	}
}
