package podtopologyspread

import (
	"context"
	"math"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
)

const preScoreStateKey plugin.StateKey = "PreScore" + Name

// preScoreState is what PreScore computes for Score.
type preScoreState struct {
	Constraints []constraint
	// IgnoredNodes lack a topology key; they score 0.
	IgnoredNodes map[string]struct{}
	// TopologyValueToPodCounts[i] counts matching pods per domain of constraint
	// i, for the domains of the feasible nodes (hostname constraints are
	// counted per node in Score).
	TopologyValueToPodCounts []map[string]int64
	// TopologyNormalizingWeight[i] is log(domains of constraint i + 2).
	TopologyNormalizingWeight []float64
}

// Clone implements plugin.StateData; the state is read-only after PreScore.
func (s *preScoreState) Clone() plugin.StateData { return s }

func topologyNormalizingWeight(size int) float64 { return math.Log(float64(size + 2)) }

func scoreForCount(cnt int64, maxSkew int32, weight float64) float64 {
	return float64(cnt)*weight + float64(maxSkew-1)
}

// calPreScoreState counts matching pods per domain of the soft constraints cs
// over allNodes, for the domains of the feasible nodes. With
// requireAllTopologies, nodes missing a topology key are ignored (and feasible
// ones recorded in IgnoredNodes); otherwise (system default constraints) each
// constraint counts the nodes that have its key.
func calPreScoreState(pod *corev1.Pod, cs []constraint, feasible, allNodes []*plugin.NodeInfo, requireAllTopologies bool) *preScoreState {
	s := &preScoreState{Constraints: cs, IgnoredNodes: map[string]struct{}{},
		TopologyValueToPodCounts: make([]map[string]int64, len(cs)), TopologyNormalizingWeight: make([]float64, len(cs))}
	topoSize := make([]int, len(cs))
	for i := range cs {
		s.TopologyValueToPodCounts[i] = map[string]int64{}
	}
	for _, n := range feasible {
		node := n.Node()
		if requireAllTopologies && !nodeLabelsMatchConstraints(node.Labels, cs) {
			s.IgnoredNodes[node.Name] = struct{}{}
			continue
		}
		for i, c := range cs {
			if c.TopologyKey == LabelHostname {
				continue
			}
			v, ok := node.Labels[c.TopologyKey]
			if !ok {
				continue
			}
			if _, seen := s.TopologyValueToPodCounts[i][v]; !seen {
				s.TopologyValueToPodCounts[i][v] = 0
				topoSize[i]++
			}
		}
	}
	for i, c := range cs {
		sz := topoSize[i]
		if c.TopologyKey == LabelHostname {
			sz = len(feasible) - len(s.IgnoredNodes)
		}
		s.TopologyNormalizingWeight[i] = topologyNormalizingWeight(sz)
	}
	for _, n := range allNodes {
		node := n.Node()
		if node == nil || (requireAllTopologies && !nodeLabelsMatchConstraints(node.Labels, cs)) {
			continue
		}
		for i := range cs {
			c := &cs[i]
			if c.TopologyKey == LabelHostname || !c.matchNodeInclusionPolicies(pod, node) {
				continue
			}
			v, ok := node.Labels[c.TopologyKey]
			if !ok {
				continue
			}
			if _, counted := s.TopologyValueToPodCounts[i][v]; !counted {
				continue
			}
			s.TopologyValueToPodCounts[i][v] += int64(countPodsMatchSelector(n.Pods, c.Selector, pod.Namespace))
		}
	}
	return s
}

// score is the raw score of nodeInfo: for each constraint whose key the node
// has, the matching pods of its domain (of the node itself for hostname)
// times the constraint's weight, plus maxSkew-1. More matching pods is a
// higher raw score; NormalizeScore inverts it.
func (s *preScoreState) score(pod *corev1.Pod, nodeInfo *plugin.NodeInfo) int64 {
	node := nodeInfo.Node()
	if _, ignored := s.IgnoredNodes[node.Name]; ignored {
		return 0
	}
	var score float64
	for i := range s.Constraints {
		c := &s.Constraints[i]
		v, ok := node.Labels[c.TopologyKey]
		if !ok {
			continue
		}
		var cnt int64
		if c.TopologyKey == LabelHostname {
			cnt = int64(countPodsMatchSelector(nodeInfo.Pods, c.Selector, pod.Namespace))
		} else {
			cnt = s.TopologyValueToPodCounts[i][v]
		}
		score += scoreForCount(cnt, c.MaxSkew, s.TopologyNormalizingWeight[i])
	}
	return int64(math.Round(score))
}

// normalize maps raw scores to [0, MaxNodeScore]: the lowest raw score gets
// the most, ignored nodes get 0, and all nodes get MaxNodeScore when the
// highest raw score is 0.
func (s *preScoreState) normalize(scores plugin.NodeScoreList) {
	var minScore int64 = math.MaxInt64
	var maxScore int64
	for _, sc := range scores {
		if _, ignored := s.IgnoredNodes[sc.Name]; ignored {
			continue
		}
		minScore = min(minScore, sc.Score)
		maxScore = max(maxScore, sc.Score)
	}
	for i := range scores {
		if _, ignored := s.IgnoredNodes[scores[i].Name]; ignored {
			scores[i].Score = 0
			continue
		}
		if maxScore == 0 {
			scores[i].Score = plugin.MaxNodeScore
			continue
		}
		scores[i].Score = plugin.MaxNodeScore * (maxScore + minScore - scores[i].Score) / maxScore
	}
}

// PreScore computes the per-domain counts of the ScheduleAnyway constraints;
// Skip when there are none or no feasible nodes.
func (pl *PodTopologySpread) PreScore(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, nodes []*plugin.NodeInfo) *plugin.Status {
	if len(nodes) == 0 {
		return plugin.NewStatus(plugin.Skip)
	}
	cs, err := pl.constraints(pod, corev1.ScheduleAnyway)
	if err != nil {
		return plugin.AsStatus(err)
	}
	if len(cs) == 0 {
		return plugin.NewStatus(plugin.Skip)
	}
	allNodes, err := pl.allNodes()
	if err != nil {
		return plugin.AsStatus(err)
	}
	requireAll := len(pod.Spec.TopologySpreadConstraints) > 0 || !pl.systemDefaulted
	state.Write(preScoreStateKey, calPreScoreState(pod, cs, nodes, allNodes, requireAll))
	return nil
}

// Score returns the raw score of the node (see preScoreState.score).
func (pl *PodTopologySpread) Score(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, nodeInfo *plugin.NodeInfo) (int64, *plugin.Status) {
	if nodeInfo.Node() == nil {
		return 0, plugin.AsStatus(errNodeNotFound)
	}
	s, err := plugin.ReadState[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return 0, plugin.AsStatus(err)
	}
	return s.score(pod, nodeInfo), nil
}

// ScoreExtensions returns the plugin, which normalises its scores.
func (pl *PodTopologySpread) ScoreExtensions() plugin.ScoreExtensions { return pl }

// NormalizeScore inverts and scales the raw scores to [0, MaxNodeScore].
func (pl *PodTopologySpread) NormalizeScore(_ context.Context, state *plugin.CycleState, _ *corev1.Pod, scores plugin.NodeScoreList) *plugin.Status {
	s, err := plugin.ReadState[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return plugin.AsStatus(err)
	}
	s.normalize(scores)
	return nil
}
