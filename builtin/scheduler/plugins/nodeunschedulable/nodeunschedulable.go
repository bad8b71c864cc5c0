package nodeunschedulable

import (
	"context"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
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

// NodeUnschedulable implements plugin.FilterPlugin.
type NodeUnschedulable struct{}

var (
	_ plugin.FilterPlugin      = NodeUnschedulable{}
	_ plugin.EnqueueExtensions = NodeUnschedulable{}
)

// New is the plugin factory.
func New(context.Context, any, plugin.Handle) (plugin.Plugin, error) {
	return NodeUnschedulable{}, nil
}

// Name implements plugin.Plugin.
func (NodeUnschedulable) Name() string { return Name }

// Filter implements plugin.FilterPlugin.
func (NodeUnschedulable) Filter(_ context.Context, _ *plugin.CycleState, pod *corev1.Pod, ni *plugin.NodeInfo) *plugin.Status {
	if ni.Node() == nil {
		return plugin.NewStatus(plugin.UnschedulableAndUnresolvable, ErrReasonUnknownCondition)
	}
	if !ni.Unschedulable() {
		return nil
	}
	t := corev1.Taint{Key: TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	if taints.TolerationsTolerateTaint(pod.Spec.Tolerations, &t) {
		return nil
	}
	return plugin.NewStatus(plugin.UnschedulableAndUnresolvable, ErrReasonUnschedulable)
}

// EventsToRegister implements plugin.EnqueueExtensions.
func (NodeUnschedulable) EventsToRegister() []plugin.ClusterEventWithHint {
	return []plugin.ClusterEventWithHint{
		{Event: plugin.ClusterEvent{Resource: plugin.Node, ActionType: plugin.Add | plugin.UpdateNodeTaint}},
		{Event: plugin.ClusterEvent{Resource: plugin.UnscheduledPod, ActionType: plugin.UpdatePodTolerations}},
	}
}
