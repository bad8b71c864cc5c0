package nodeunschedulable

import (
	"context"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/framework"
	"github.com/converge-dev/converge/builtin/scheduler/taints"
)

// Name is the plugin name.
const Name = "NodeUnschedulable"

// Kubernetes' rejection reasons.
const (
	ErrReasonUnschedulable    = "node(s) were unschedulable"
	ErrReasonUnknownCondition = "node(s) had unknown conditions"
)

// TaintNodeUnschedulable is the taint a cordoned node implies.
const TaintNodeUnschedulable = "node.kubernetes.io/unschedulable"

// NodeUnschedulable implements framework.FilterPlugin.
type NodeUnschedulable struct{}

var (
	_ framework.FilterPlugin      = NodeUnschedulable{}
	_ framework.EnqueueExtensions = NodeUnschedulable{}
)

// New is the plugin factory.
func New(context.Context, any, framework.Handle) (framework.Plugin, error) {
	return NodeUnschedulable{}, nil
}

// Name implements framework.Plugin.
func (NodeUnschedulable) Name() string { return Name }

// Filter implements framework.FilterPlugin.
func (NodeUnschedulable) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	if ni.Node() == nil {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnknownCondition)
	}
	if !ni.Unschedulable() {
		return nil
	}
	t := corev1.Taint{Key: TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	if taints.TolerationsTolerateTaint(pod.Spec.Tolerations, &t) {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnschedulable)
}

// EventsToRegister implements framework.EnqueueExtensions.
func (NodeUnschedulable) EventsToRegister() []framework.ClusterEventWithHint {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}},
		{Event: framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.UpdatePodTolerations}},
	}
}
