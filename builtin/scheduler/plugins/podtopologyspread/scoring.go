package podtopologyspread

import (
	"context"
	"math"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/framework"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

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

// Clone implements framework.StateData; the state is read-only after PreScore.
func (s *preScoreState) Clone() framework.StateData { return s }

func topologyNormalizingWeight(size int) float64 { return math.Log(float64(size + 2)) }

func scoreForCount(cnt int64, maxSkew int32, weight float64) float64 {
	return float64(cnt)*weight + float64(maxSkew-1)
}

// calPreScoreState counts matching pods per domain of the soft constraints cs
// over allNodes, for the domains of the feasible nodes. With
// requireAllTopologies, nodes missing a topology key are ignored (and feasible
// ones recorded in IgnoredNodes); otherwise (system default constraints) each
// constraint counts the nodes that have its key.
func calPreScoreState(pod *corev1.Pod, cs []constraint, feasible, allNodes []*framework.NodeInfo, requireAllTopologies bool) *preScoreState {
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
func (s *preScoreState) score(pod *corev1.Pod, nodeInfo *framework.NodeInfo) int64 {
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
func (s *preScoreState) normalize(scores framework.NodeScoreList) {
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
			scores[i].Score = framework.MaxNodeScore
			continue
		}
		scores[i].Score = framework.MaxNodeScore * (maxScore + minScore - scores[i].Score) / maxScore
	}
}

// PreScore computes the per-domain counts of the ScheduleAnyway constraints;
// Skip when there are none or no feasible nodes.
func (pl *PodTopologySpread) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo) *framework.Status {
	if len(nodes) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	cs, err := pl.constraints(pod, corev1.ScheduleAnyway)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(cs) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	allNodes, err := pl.allNodes()
	if err != nil {
		return framework.AsStatus(err)
	}
	requireAll := len(pod.Spec.TopologySpreadConstraints) > 0 || !pl.systemDefaulted
	state.Write(preScoreStateKey, calPreScoreState(pod, cs, nodes, allNodes, requireAll))
	return nil
}

// Score returns the raw score of the node (see preScoreState.score).
func (pl *PodTopologySpread) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	if nodeInfo.Node() == nil {
		return 0, framework.AsStatus(errNodeNotFound)
	}
	s, err := framework.ReadState[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	return s.score(pod, nodeInfo), nil
}

// ScoreExtensions returns the plugin, which normalises its scores.
func (pl *PodTopologySpread) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore inverts and scales the raw scores to [0, MaxNodeScore].
func (pl *PodTopologySpread) NormalizeScore(_ context.Context, state *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	s, err := framework.ReadState[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.normalize(scores)
	return nil
}
