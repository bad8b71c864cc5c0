package nodeports

import (
	"context"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
)

// Name is the plugin name.
const Name = "NodePorts"

// ErrReason is Kubernetes' rejection reason.
const ErrReason = "node(s) didn't have free ports for the requested pod ports"

const stateKey plugin.StateKey = "PreFilter" + Name

type preFilterState []corev1.ContainerPort

func (s preFilterState) Clone() plugin.StateData { return s }

// NodePorts implements PreFilter and Filter.
type NodePorts struct{}

var (
	_ plugin.PreFilterPlugin   = NodePorts{}
	_ plugin.FilterPlugin      = NodePorts{}
	_ plugin.EnqueueExtensions = NodePorts{}
)

// New is the plugin factory.
func New(context.Context, any, plugin.Handle) (plugin.Plugin, error) { return NodePorts{}, nil }

// Name implements plugin.Plugin.
func (NodePorts) Name() string { return Name }

// HostPorts returns the pod's container ports that use a host port.
func HostPorts(pod *corev1.Pod) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				out = append(out, p)
			}
		}
	}
	return out
}

// PreFilter implements plugin.PreFilterPlugin; Skip when no host ports.
func (NodePorts) PreFilter(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, _ []*plugin.NodeInfo) (*plugin.PreFilterResult, *plugin.Status) {
	ports := HostPorts(pod)
	if len(ports) == 0 {
		return nil, plugin.NewStatus(plugin.Skip)
	}
	state.Write(stateKey, preFilterState(ports))
	return nil, nil
}

// PreFilterExtensions implements plugin.PreFilterPlugin.
func (NodePorts) PreFilterExtensions() plugin.PreFilterExtensions { return nil }

// Fits reports whether none of ports conflicts with the node's used ports.
func Fits(ports []corev1.ContainerPort, ni *plugin.NodeInfo) bool {
	for _, p := range ports {
		if ni.UsedPorts.CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			return false
		}
	}
	return true
}

// Filter implements plugin.FilterPlugin.
func (NodePorts) Filter(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, ni *plugin.NodeInfo) *plugin.Status {
	ports, err := plugin.ReadState[preFilterState](state, stateKey)
	if err != nil {
		ports = HostPorts(pod)
	}
	if !Fits(ports, ni) {
		return plugin.NewStatus(plugin.Unschedulable, ErrReason)
	}
	return nil
}

// EventsToRegister implements plugin.EnqueueExtensions.
func (NodePorts) EventsToRegister() []plugin.ClusterEventWithHint {
	return []plugin.ClusterEventWithHint{
		{Event: plugin.ClusterEvent{Resource: plugin.Pod, ActionType: plugin.Delete}},
		{Event: plugin.ClusterEvent{Resource: plugin.Node, ActionType: plugin.Add}},
	}
}
