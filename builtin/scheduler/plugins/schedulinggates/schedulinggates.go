package schedulinggates

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
)

// Name is the plugin name.
const Name = "SchedulingGates"

// SchedulingGates implements plugin.PreEnqueuePlugin.
type SchedulingGates struct{}

var (
	_ plugin.PreEnqueuePlugin  = SchedulingGates{}
	_ plugin.EnqueueExtensions = SchedulingGates{}
)

// New is the plugin factory.
func New(context.Context, any, plugin.Handle) (plugin.Plugin, error) {
	return SchedulingGates{}, nil
}

// Name implements plugin.Plugin.
func (SchedulingGates) Name() string { return Name }

// PreEnqueue implements plugin.PreEnqueuePlugin.
func (SchedulingGates) PreEnqueue(_ context.Context, pod *corev1.Pod) *plugin.Status {
	if len(pod.Spec.SchedulingGates) == 0 {
		return nil
	}
	gates := make([]string, 0, len(pod.Spec.SchedulingGates))
	for _, g := range pod.Spec.SchedulingGates {
		gates = append(gates, g.Name)
	}
	return plugin.NewStatus(plugin.UnschedulableAndUnresolvable, fmt.Sprintf("waiting for scheduling gates: %v", gates))
}

// EventsToRegister implements plugin.EnqueueExtensions.
func (SchedulingGates) EventsToRegister() []plugin.ClusterEventWithHint {
	return []plugin.ClusterEventWithHint{{Event: plugin.ClusterEvent{Resource: plugin.UnscheduledPod, ActionType: plugin.UpdatePodSchedulingGatesEliminated}}}
}
