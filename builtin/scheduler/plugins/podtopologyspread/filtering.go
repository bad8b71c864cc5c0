package podtopologyspread

import (
	"context"
	"maps"
	"math"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
)

const preFilterStateKey plugin.StateKey = "PreFilter" + Name

// preFilterState is what PreFilter computes for Filter: the hard constraints,
// the number of matching pods per domain (topology value) of each, and each
// constraint's global minimum.
type preFilterState struct {
	Constraints []constraint
	// TpValueToMatchNum[i] maps a domain of constraint i to its matching pods.
	TpValueToMatchNum []map[string]int
	// MinMatchNum[i] is the smallest value in TpValueToMatchNum[i]
	// (math.MaxInt32 when there is no domain).
	MinMatchNum []int
}

// Clone implements plugin.StateData; the constraints are shared.
func (s *preFilterState) Clone() plugin.StateData {
	if s == nil {
		return nil
	}
	c := &preFilterState{Constraints: s.Constraints, TpValueToMatchNum: make([]map[string]int, len(s.TpValueToMatchNum)),
		MinMatchNum: append([]int(nil), s.MinMatchNum...)}
	for i, m := range s.TpValueToMatchNum {
		c.TpValueToMatchNum[i] = maps.Clone(m)
	}
	return c
}

func (s *preFilterState) recomputeMin(i int) {
	m := math.MaxInt32
	for _, n := range s.TpValueToMatchNum[i] {
		m = min(m, n)
	}
	s.MinMatchNum[i] = m
}

// minMatchNum is the global minimum of constraint i, or 0 while there are fewer
// domains than minDomains.
func (s *preFilterState) minMatchNum(i int) int {
	if len(s.TpValueToMatchNum[i]) < int(s.Constraints[i].MinDomains) {
		return 0
	}
	return s.MinMatchNum[i]
}

// updateWithPod adds delta for pi's pod on node to every constraint that
// counts it (same namespace as the preemptor, matching selector, node included).
func (s *preFilterState) updateWithPod(updated, preemptor *corev1.Pod, node *corev1.Node, delta int) {
	if s == nil || node == nil || updated.Namespace != preemptor.Namespace || updated.DeletionTimestamp != nil {
		return
	}
	if !nodeLabelsMatchConstraints(node.Labels, s.Constraints) {
		return
	}
	for i := range s.Constraints {
		c := &s.Constraints[i]
		if !c.Selector.Matches(updated.Labels) || !c.matchNodeInclusionPolicies(preemptor, node) {
			continue
		}
		v := node.Labels[c.TopologyKey]
		s.TpValueToMatchNum[i][v] += delta
		s.recomputeMin(i)
	}
}

// calPreFilterState counts, for each hard constraint, the matching pods per
// domain over every node that has all topology keys and passes the
// constraint's inclusion policies.
func calPreFilterState(pod *corev1.Pod, cs []constraint, nodes []*plugin.NodeInfo) *preFilterState {
	s := &preFilterState{Constraints: cs, TpValueToMatchNum: make([]map[string]int, len(cs)), MinMatchNum: make([]int, len(cs))}
	for i := range cs {
		s.TpValueToMatchNum[i] = map[string]int{}
	}
	for _, n := range nodes {
		node := n.Node()
		if node == nil || !nodeLabelsMatchConstraints(node.Labels, cs) {
			continue
		}
		for i := range cs {
			c := &cs[i]
			if !c.matchNodeInclusionPolicies(pod, node) {
				continue
			}
			s.TpValueToMatchNum[i][node.Labels[c.TopologyKey]] += countPodsMatchSelector(n.Pods, c.Selector, pod.Namespace)
		}
	}
	for i := range cs {
		s.recomputeMin(i)
	}
	return s
}

// filter checks node against the state: every topology key must be present
// (else UnschedulableAndUnresolvable), and for each constraint the domain's
// matching pods plus the pod itself (when it matches) minus the global minimum
// must not exceed maxSkew (else Unschedulable).
func (s *preFilterState) filter(pod *corev1.Pod, node *corev1.Node) *plugin.Status {
	for i := range s.Constraints {
		c := &s.Constraints[i]
		v, ok := node.Labels[c.TopologyKey]
		if !ok {
			return plugin.NewStatus(plugin.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch)
		}
		self := 0
		if c.Selector.Matches(pod.Labels) {
			self = 1
		}
		if skew := s.TpValueToMatchNum[i][v] + self - s.minMatchNum(i); skew > int(c.MaxSkew) {
			return plugin.NewStatus(plugin.Unschedulable, ErrReasonConstraintsNotMatch)
		}
	}
	return nil
}

// PreFilter computes the per-domain counts of the DoNotSchedule constraints;
// Skip when there are none.
func (pl *PodTopologySpread) PreFilter(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, nodes []*plugin.NodeInfo) (*plugin.PreFilterResult, *plugin.Status) {
	cs, err := pl.constraints(pod, corev1.DoNotSchedule)
	if err != nil {
		return nil, plugin.AsStatus(err)
	}
	if len(cs) == 0 {
		return nil, plugin.NewStatus(plugin.Skip)
	}
	state.Write(preFilterStateKey, calPreFilterState(pod, cs, nodes))
	return nil, nil
}

// PreFilterExtensions returns the plugin: it updates its counts when
// preemption simulates adding or removing pods.
func (pl *PodTopologySpread) PreFilterExtensions() plugin.PreFilterExtensions { return pl }

// AddPod counts podInfoToAdd on nodeInfo.
func (pl *PodTopologySpread) AddPod(_ context.Context, state *plugin.CycleState, podToSchedule *corev1.Pod, podInfoToAdd *plugin.PodInfo, nodeInfo *plugin.NodeInfo) *plugin.Status {
	s, err := plugin.ReadState[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return plugin.AsStatus(err)
	}
	s.updateWithPod(podInfoToAdd.Pod, podToSchedule, nodeInfo.Node(), 1)
	return nil
}

// RemovePod uncounts podInfoToRemove on nodeInfo.
func (pl *PodTopologySpread) RemovePod(_ context.Context, state *plugin.CycleState, podToSchedule *corev1.Pod, podInfoToRemove *plugin.PodInfo, nodeInfo *plugin.NodeInfo) *plugin.Status {
	s, err := plugin.ReadState[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return plugin.AsStatus(err)
	}
	s.updateWithPod(podInfoToRemove.Pod, podToSchedule, nodeInfo.Node(), -1)
	return nil
}

// Filter rejects nodes whose domain would exceed maxSkew.
func (pl *PodTopologySpread) Filter(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, nodeInfo *plugin.NodeInfo) *plugin.Status {
	node := nodeInfo.Node()
	if node == nil {
		return plugin.AsStatus(errNodeNotFound)
	}
	s, err := plugin.ReadState[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return plugin.AsStatus(err)
	}
	return s.filter(pod, node)
}
