package schedulinggates

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/framework"
)

// Name is the plugin name.
const Name = "SchedulingGates"

// SchedulingGates implements framework.PreEnqueuePlugin.
type SchedulingGates struct{}

var (
	_ framework.PreEnqueuePlugin  = SchedulingGates{}
	_ framework.EnqueueExtensions = SchedulingGates{}
)

// New is the plugin factory.
func New(context.Context, any, framework.Handle) (framework.Plugin, error) {
	return SchedulingGates{}, nil
}

// Name implements framework.Plugin.
func (SchedulingGates) Name() string { return Name }

// PreEnqueue implements framework.PreEnqueuePlugin.
func (SchedulingGates) PreEnqueue(_ context.Context, pod *corev1.Pod) *framework.Status {
	if len(pod.Spec.SchedulingGates) == 0 {
		return nil
	}
	gates := make([]string, 0, len(pod.Spec.SchedulingGates))
	for _, g := range pod.Spec.SchedulingGates {
		gates = append(gates, g.Name)
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("waiting for scheduling gates: %v", gates))
}

// EventsToRegister implements framework.EnqueueExtensions.
func (SchedulingGates) EventsToRegister() []framework.ClusterEventWithHint {
	return []framework.ClusterEventWithHint{{Event: framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.UpdatePodSchedulingGatesEliminated}}}
}
