package nodename

import (
	"context"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/framework"
)

// Name is the plugin name.
const Name = "NodeName"

// ErrReason is Kubernetes' rejection reason.
const ErrReason = "node(s) didn't match the requested node name"

// NodeName implements framework.FilterPlugin.
type NodeName struct{}

var (
	_ framework.FilterPlugin      = NodeName{}
	_ framework.EnqueueExtensions = NodeName{}
)

// New is the plugin factory.
func New(context.Context, any, framework.Handle) (framework.Plugin, error) { return NodeName{}, nil }

// Name implements framework.Plugin.
func (NodeName) Name() string { return Name }

// Fits reports whether the pod may run on the node by name.
func Fits(pod *corev1.Pod, node *corev1.Node) bool {
	return pod.Spec.NodeName == "" || pod.Spec.NodeName == node.Name
}

// Filter implements framework.FilterPlugin.
func (NodeName) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	if !Fits(pod, ni.Node()) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)
	}
	return nil
}

// EventsToRegister implements framework.EnqueueExtensions.
func (NodeName) EventsToRegister() []framework.ClusterEventWithHint {
	return []framework.ClusterEventWithHint{{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}}}
}
