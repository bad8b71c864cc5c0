package balancedallocation

import (
	"context"
	"fmt"
	"math"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/noderesourcesfit"
)

// Name is the plugin name.
const Name = "NodeResourcesBalancedAllocation"

const preScoreKey plugin.StateKey = "PreScore" + Name

// Args are the NodeResourcesBalancedAllocationArgs.
type Args struct {
	Resources []noderesourcesfit.ResourceSpec `json:"resources,omitempty"`
}

type preScoreState struct{ requested []int64 }

func (s *preScoreState) Clone() plugin.StateData { return s }

// BalancedAllocation implements PreScore and Score.
type BalancedAllocation struct {
	resources []noderesourcesfit.ResourceSpec
}

var (
	_ plugin.PreScorePlugin = (*BalancedAllocation)(nil)
	_ plugin.ScorePlugin    = (*BalancedAllocation)(nil)
)

// New is the plugin factory.
func New(_ context.Context, args any, _ plugin.Handle) (plugin.Plugin, error) {
	var a Args
	if err := plugin.DecodeArgs(args, &a); err != nil {
		return nil, fmt.Errorf("%s args: %w", Name, err)
	}
	if len(a.Resources) == 0 {
		a.Resources = noderesourcesfit.DefaultResources()
	}
	return &BalancedAllocation{resources: a.Resources}, nil
}

// Name implements plugin.Plugin.
func (*BalancedAllocation) Name() string { return Name }

func (b *BalancedAllocation) podRequests(state *plugin.CycleState, pod *corev1.Pod) []int64 {
	pi, _ := plugin.PodInfoFor(state, pod)
	r := pi.Requests
	out := make([]int64, len(b.resources))
	for i, res := range b.resources {
		out[i] = r.Get(res.Name)
	}
	return out
}

// PreScore implements plugin.PreScorePlugin; Skip for pods that request
// none of the resources (best effort).
func (b *BalancedAllocation) PreScore(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, _ []*plugin.NodeInfo) *plugin.Status {
	req := b.podRequests(state, pod)
	zero := true
	for _, v := range req {
		if v != 0 {
			zero = false
		}
	}
	if zero {
		return plugin.NewStatus(plugin.Skip)
	}
	state.Write(preScoreKey, &preScoreState{requested: req})
	return nil
}

// Score implements plugin.ScorePlugin.
func (b *BalancedAllocation) Score(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, ni *plugin.NodeInfo) (int64, *plugin.Status) {
	s, err := plugin.ReadState[*preScoreState](state, preScoreKey)
	if err != nil {
		s = &preScoreState{requested: b.podRequests(state, pod)}
	}
	return Score(b.resources, s.requested, ni), nil
}

// Score computes the balance score for a pod requesting podRequested[i] of
// resources[i] on the node.
func Score(resources []noderesourcesfit.ResourceSpec, podRequested []int64, ni *plugin.NodeInfo) int64 {
	fractions := make([]float64, 0, len(resources))
	for i, r := range resources {
		alloc := ni.Allocatable.Get(r.Name)
		if alloc == 0 {
			continue
		}
		f := float64(ni.Requested.Get(r.Name)+podRequested[i]) / float64(alloc)
		fractions = append(fractions, min(f, 1))
	}
	var std float64
	switch len(fractions) {
	case 0, 1:
	case 2:
		std = math.Abs(fractions[0]-fractions[1]) / 2
	default:
		var mean float64
		for _, f := range fractions {
			mean += f
		}
		mean /= float64(len(fractions))
		for _, f := range fractions {
			std += (f - mean) * (f - mean)
		}
		std = math.Sqrt(std / float64(len(fractions)))
	}
	return int64((1 - std) * float64(plugin.MaxNodeScore))
}

// ScoreExtensions implements plugin.ScorePlugin.
func (*BalancedAllocation) ScoreExtensions() plugin.ScoreExtensions { return nil }
