package noderesourcesfit

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
)

// Name is the plugin name.
const Name = "NodeResourcesFit"

// ErrReasonTooManyPods is Kubernetes' reason when the pod count is reached.
const ErrReasonTooManyPods = "Too many pods"

const (
	preFilterKey plugin.StateKey = "PreFilter" + Name
	preScoreKey  plugin.StateKey = "PreScore" + Name
)

type preFilterState struct{ plugin.Resource }

func (s *preFilterState) Clone() plugin.StateData { return s }

type preScoreState struct {
	requested []int64 // per configured resource
}

func (s *preScoreState) Clone() plugin.StateData { return s }

// Fit implements PreFilter, Filter, PreScore and Score.
type Fit struct {
	args     Args
	ignored  map[string]struct{}
	resource []ResourceSpec
	weights  []int64
	// one scores one resource; Score combines them by weight.
	one func(requested, capacity int64) int64
	// cpuMem[i] is set when resource[i] is cpu or memory (scored with
	// non-zero defaults).
	cpuMem []bool
}

var (
	_ plugin.PreFilterPlugin   = (*Fit)(nil)
	_ plugin.FilterPlugin      = (*Fit)(nil)
	_ plugin.PreScorePlugin    = (*Fit)(nil)
	_ plugin.ScorePlugin       = (*Fit)(nil)
	_ plugin.EnqueueExtensions = (*Fit)(nil)
)

// New is the plugin factory; args are Args (or their JSON).
func New(_ context.Context, args any, _ plugin.Handle) (plugin.Plugin, error) {
	var a Args
	if err := plugin.DecodeArgs(args, &a); err != nil {
		return nil, fmt.Errorf("%s args: %w", Name, err)
	}
	return NewWithArgs(a)
}

// NewWithArgs builds the plugin from typed args.
func NewWithArgs(a Args) (*Fit, error) {
	if a.ScoringStrategy != nil {
		s := *a.ScoringStrategy
		a.ScoringStrategy = &s
	}
	a.complete()
	if err := a.validate(); err != nil {
		return nil, fmt.Errorf("%s args: %w", Name, err)
	}
	f := &Fit{args: a, ignored: map[string]struct{}{}, resource: a.ScoringStrategy.Resources}
	for _, r := range a.IgnoredResources {
		f.ignored[r] = struct{}{}
	}
	f.weights = make([]int64, len(f.resource))
	f.cpuMem = make([]bool, len(f.resource))
	for i, r := range f.resource {
		f.weights[i] = r.Weight
		f.cpuMem[i] = r.Name == "cpu" || r.Name == "memory"
	}
	switch a.ScoringStrategy.Type {
	case LeastAllocated:
		f.one = leastRequestedScore
	case MostAllocated:
		f.one = mostRequestedScore
	case RequestedToCapacityRatio:
		f.one = shapeScorer(a.ScoringStrategy.RequestedToCapacityRatio.Shape)
	}
	return f, nil
}

// Name implements plugin.Plugin.
func (*Fit) Name() string { return Name }

// PreFilter implements plugin.PreFilterPlugin.
func (f *Fit) PreFilter(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, _ []*plugin.NodeInfo) (*plugin.PreFilterResult, *plugin.Status) {
	pi, _ := plugin.PodInfoFor(state, pod)
	state.Write(preFilterKey, &preFilterState{*pi.Requests})
	return nil, nil
}

// PreFilterExtensions implements plugin.PreFilterPlugin.
func (*Fit) PreFilterExtensions() plugin.PreFilterExtensions { return nil }

// InsufficientResource describes one missing resource.
type InsufficientResource struct {
	ResourceName string
	Reason       string
	Requested    int64
	Used         int64
	Capacity     int64
	// Unresolvable: the pod alone asks for more than the node's allocatable, so
	// no preemption can help.
	Unresolvable bool
}

// Filter implements plugin.FilterPlugin.
func (f *Fit) Filter(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, ni *plugin.NodeInfo) *plugin.Status {
	s, err := plugin.ReadState[*preFilterState](state, preFilterKey)
	if err != nil {
		s = &preFilterState{*plugin.ComputePodRequests(pod, false)}
	}
	insufficient := Fits(&s.Resource, ni, f.isIgnored)
	if len(insufficient) == 0 {
		return nil
	}
	reasons := make([]string, len(insufficient))
	code := plugin.UnschedulableAndUnresolvable
	for i, r := range insufficient {
		reasons[i] = r.Reason
		if !r.Unresolvable {
			code = plugin.Unschedulable
		}
	}
	return plugin.NewStatus(code, reasons...)
}

func (f *Fit) isIgnored(name string) bool {
	if _, ok := f.ignored[name]; ok {
		return true
	}
	for _, g := range f.args.IgnoredResourceGroups {
		if prefix, _, ok := strings.Cut(name, "/"); ok && prefix == g {
			return true
		}
	}
	return false
}

// Fits returns the resources the node lacks for podRequest, in Kubernetes'
// order (pods, cpu, memory, ephemeral-storage, extended resources).
// ignored extended resources are skipped (nil: none).
func Fits(podRequest *plugin.Resource, ni *plugin.NodeInfo, ignored func(string) bool) []InsufficientResource {
	var out []InsufficientResource
	alloc, used := ni.Allocatable, ni.Requested
	if allowed := alloc.AllowedPodNumber; int64(len(ni.Pods))+1 > allowed {
		out = append(out, InsufficientResource{ResourceName: "pods", Reason: ErrReasonTooManyPods, Requested: 1, Used: int64(len(ni.Pods)), Capacity: allowed, Unresolvable: allowed < 1})
	}
	if podRequest.MilliCPU == 0 && podRequest.Memory == 0 && podRequest.EphemeralStorage == 0 && len(podRequest.ScalarResources) == 0 {
		return out
	}
	check := func(name string, req, a, u int64) {
		if req > 0 && a < req+u {
			out = append(out, InsufficientResource{ResourceName: name, Reason: "Insufficient " + name, Requested: req, Used: u, Capacity: a, Unresolvable: req > a})
		}
	}
	check("cpu", podRequest.MilliCPU, alloc.MilliCPU, used.MilliCPU)
	check("memory", podRequest.Memory, alloc.Memory, used.Memory)
	check("ephemeral-storage", podRequest.EphemeralStorage, alloc.EphemeralStorage, used.EphemeralStorage)
	if len(podRequest.ScalarResources) == 0 {
		return out
	}
	for _, name := range slices.Sorted(maps.Keys(podRequest.ScalarResources)) {
		if ignored != nil && ignored(name) {
			continue
		}
		check(name, podRequest.ScalarResources[name], alloc.ScalarResources[name], used.ScalarResources[name])
	}
	return out
}

// PreScore implements plugin.PreScorePlugin: it records the pod's
// requests for the scored resources (non-zero defaults for cpu/memory).
func (f *Fit) PreScore(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, _ []*plugin.NodeInfo) *plugin.Status {
	pi, _ := plugin.PodInfoFor(state, pod)
	nz, plain := pi.NonZeroRequests, pi.Requests
	s := &preScoreState{requested: make([]int64, len(f.resource))}
	for i, r := range f.resource {
		if r.Name == "cpu" || r.Name == "memory" {
			s.requested[i] = nz.Get(r.Name)
		} else {
			s.requested[i] = plain.Get(r.Name)
		}
	}
	state.Write(preScoreKey, s)
	return nil
}

// Score implements plugin.ScorePlugin.
func (f *Fit) Score(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, ni *plugin.NodeInfo) (int64, *plugin.Status) {
	s, err := plugin.ReadState[*preScoreState](state, preScoreKey)
	if err != nil {
		if st := f.PreScore(context.Background(), state, pod, nil); st != nil {
			return 0, st
		}
		s, _ = plugin.ReadState[*preScoreState](state, preScoreKey)
	}
	return f.score(s.requested, ni), nil
}

// score is the weighted mean of the per-resource scores for a pod
// requesting podRequested[i] of resource[i]; resources with zero allocatable
// (and extended resources the pod does not request) are left out. It
// allocates nothing.
func (f *Fit) score(podRequested []int64, ni *plugin.NodeInfo) int64 {
	var score, sum int64
	for i, r := range f.resource {
		var alloc, used int64
		switch {
		case f.cpuMem[i] && r.Name == "cpu":
			alloc, used = ni.Allocatable.MilliCPU, ni.NonZeroRequested.MilliCPU
		case f.cpuMem[i]:
			alloc, used = ni.Allocatable.Memory, ni.NonZeroRequested.Memory
		default:
			if podRequested[i] == 0 {
				// Extended resources the pod does not request do not count.
				continue
			}
			alloc, used = ni.Allocatable.Get(r.Name), ni.Requested.Get(r.Name)
		}
		if alloc == 0 {
			continue
		}
		score += f.one(used+podRequested[i], alloc) * f.weights[i]
		sum += f.weights[i]
	}
	if sum == 0 {
		return 0
	}
	return score / sum
}

// ScoreExtensions implements plugin.ScorePlugin.
func (*Fit) ScoreExtensions() plugin.ScoreExtensions { return nil }

// EventsToRegister implements plugin.EnqueueExtensions.
func (*Fit) EventsToRegister() []plugin.ClusterEventWithHint {
	return []plugin.ClusterEventWithHint{
		{Event: plugin.ClusterEvent{Resource: plugin.Pod, ActionType: plugin.Delete | plugin.UpdatePodScaleDown}},
		{Event: plugin.ClusterEvent{Resource: plugin.Node, ActionType: plugin.Add | plugin.UpdateNodeAllocatable}},
	}
}

func leastRequestedScore(requested, capacity int64) int64 {
	if requested > capacity {
		return 0
	}
	return (capacity - requested) * plugin.MaxNodeScore / capacity
}

func mostRequestedScore(requested, capacity int64) int64 {
	if requested > capacity {
		requested = capacity
	}
	return requested * plugin.MaxNodeScore / capacity
}

// shapeScorer returns the RequestedToCapacityRatio function: utilisation in
// percent mapped through the piecewise-linear shape, scaled to [0, 100].
func shapeScorer(shape []UtilizationShapePoint) func(requested, capacity int64) int64 {
	type point struct{ u, s int64 }
	pts := make([]point, len(shape))
	for i, p := range shape {
		pts[i] = point{int64(p.Utilization), int64(p.Score) * (plugin.MaxNodeScore / MaxCustomPriorityScore)}
	}
	f := func(u int64) int64 {
		if u <= pts[0].u {
			return pts[0].s
		}
		for i := 1; i < len(pts); i++ {
			if u <= pts[i].u {
				return pts[i-1].s + (pts[i].s-pts[i-1].s)*(u-pts[i-1].u)/(pts[i].u-pts[i-1].u)
			}
		}
		return pts[len(pts)-1].s
	}
	return func(requested, capacity int64) int64 {
		if capacity == 0 || requested > capacity {
			return f(100)
		}
		return f(requested * 100 / capacity)
	}
}
