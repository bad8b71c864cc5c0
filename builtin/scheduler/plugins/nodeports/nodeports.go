package nodeports

import (
	"context"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/framework"
)

// Name is the plugin name.
const Name = "NodePorts"

// ErrReason is Kubernetes' rejection reason.
const ErrReason = "node(s) didn't have free ports for the requested pod ports"

const stateKey framework.StateKey = "PreFilter" + Name

type preFilterState []corev1.ContainerPort

func (s preFilterState) Clone() framework.StateData { return s }

// NodePorts implements PreFilter and Filter.
type NodePorts struct{}

var (
	_ framework.PreFilterPlugin   = NodePorts{}
	_ framework.FilterPlugin      = NodePorts{}
	_ framework.EnqueueExtensions = NodePorts{}
)

// New is the plugin factory.
func New(context.Context, any, framework.Handle) (framework.Plugin, error) { return NodePorts{}, nil }

// Name implements framework.Plugin.
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

// PreFilter implements framework.PreFilterPlugin; Skip when no host ports.
func (NodePorts) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	ports := HostPorts(pod)
	if len(ports) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, preFilterState(ports))
	return nil, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (NodePorts) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Fits reports whether none of ports conflicts with the node's used ports.
func Fits(ports []corev1.ContainerPort, ni *framework.NodeInfo) bool {
	for _, p := range ports {
		if ni.UsedPorts.CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			return false
		}
	}
	return true
}

// Filter implements framework.FilterPlugin.
func (NodePorts) Filter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	ports, err := framework.ReadState[preFilterState](state, stateKey)
	if err != nil {
		ports = HostPorts(pod)
	}
	if !Fits(ports, ni) {
		return framework.NewStatus(framework.Unschedulable, ErrReason)
	}
	return nil
}

// EventsToRegister implements framework.EnqueueExtensions.
func (NodePorts) EventsToRegister() []framework.ClusterEventWithHint {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.Delete}},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}},
	}
}
