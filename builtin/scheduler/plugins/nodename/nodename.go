package nodename

import (
	"context"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
)

// Name is the plugin name.
const Name = "NodeName"

// ErrReason is Kubernetes' rejection reason.
const ErrReason = "node(s) didn't match the requested node name"

// NodeName implements plugin.FilterPlugin.
type NodeName struct{}

var (
	_ plugin.FilterPlugin      = NodeName{}
	_ plugin.EnqueueExtensions = NodeName{}
)

// New is the plugin factory.
func New(context.Context, any, plugin.Handle) (plugin.Plugin, error) { return NodeName{}, nil }

// Name implements plugin.Plugin.
func (NodeName) Name() string { return Name }

// Fits reports whether the pod may run on the node by name.
func Fits(pod *corev1.Pod, node *corev1.Node) bool {
	return pod.Spec.NodeName == "" || pod.Spec.NodeName == node.Name
}

// Filter implements plugin.FilterPlugin.
func (NodeName) Filter(_ context.Context, _ *plugin.CycleState, pod *corev1.Pod, ni *plugin.NodeInfo) *plugin.Status {
	if !Fits(pod, ni.Node()) {
		return plugin.NewStatus(plugin.UnschedulableAndUnresolvable, ErrReason)
	}
	return nil
}

// EventsToRegister implements plugin.EnqueueExtensions.
func (NodeName) EventsToRegister() []plugin.ClusterEventWithHint {
	return []plugin.ClusterEventWithHint{{Event: plugin.ClusterEvent{Resource: plugin.Node, ActionType: plugin.Add}}}
}
