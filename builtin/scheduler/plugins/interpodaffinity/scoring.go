package interpodaffinity

import (
	"context"
	"fmt"
	"math"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/api/labels"
)

const preScoreStateKey plugin.StateKey = "PreScore" + Name

// scoreMap is a score per topology key and value.
type scoreMap map[string]map[string]int64

func (m scoreMap) processTerm(term *plugin.AffinityTerm, weight int32, pod *corev1.Pod, nsLabels map[string]string, node *corev1.Node, multiplier int32) {
	if !term.Matches(pod, nsLabels) {
		return
	}
	v, ok := node.Labels[term.TopologyKey]
	if !ok {
		return
	}
	if m[term.TopologyKey] == nil {
		m[term.TopologyKey] = map[string]int64{}
	}
	m[term.TopologyKey][v] += int64(weight * multiplier)
}

func (m scoreMap) processTerms(terms []plugin.WeightedAffinityTerm, pod *corev1.Pod, nsLabels map[string]string, node *corev1.Node, multiplier int32) {
	for i := range terms {
		m.processTerm(&terms[i].AffinityTerm, terms[i].Weight, pod, nsLabels, node, multiplier)
	}
}

// preScoreState is the per-domain score PreScore computes.
type preScoreState struct {
	topologyScore scoreMap
}

// Clone implements plugin.StateData; the state is read-only after PreScore.
func (s *preScoreState) Clone() plugin.StateData { return s }

// processExistingPod adds the contribution of one existing pod on node.
func (pl *InterPodAffinity) processExistingPod(m scoreMap, in *plugin.PodInfo, inNSLabels map[string]string, existing *plugin.PodInfo, node *corev1.Node) {
	if len(node.Labels) == 0 {
		return
	}
	var exLabels map[string]string
	if selectsNamespacesByLabelW(in.PreferredAffinityTerms) || selectsNamespacesByLabelW(in.PreferredAntiAffinityTerms) {
		exLabels = pl.nsLabels(existing.Pod.Namespace)
	}
	// The incoming pod's preferred terms matching the existing pod.
	m.processTerms(in.PreferredAffinityTerms, existing.Pod, exLabels, node, 1)
	m.processTerms(in.PreferredAntiAffinityTerms, existing.Pod, exLabels, node, -1)
	// The existing pod's terms matching the incoming pod.
	if pl.args.HardPodAffinityWeight > 0 {
		for i := range existing.RequiredAffinityTerms {
			m.processTerm(&existing.RequiredAffinityTerms[i], pl.args.HardPodAffinityWeight, in.Pod, inNSLabels, node, 1)
		}
	}
	m.processTerms(existing.PreferredAffinityTerms, in.Pod, inNSLabels, node, 1)
	m.processTerms(existing.PreferredAntiAffinityTerms, in.Pod, inNSLabels, node, -1)
}

// PreScore builds the per-domain scores; Skip when nothing contributes.
func (pl *InterPodAffinity) PreScore(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, nodes []*plugin.NodeInfo) *plugin.Status {
	if len(nodes) == 0 {
		return plugin.NewStatus(plugin.Skip)
	}
	in, err := plugin.PodInfoFor(state, pod)
	if err != nil {
		return plugin.AsStatus(fmt.Errorf("parse pod: %w", err))
	}
	hasConstraints := len(in.PreferredAffinityTerms)+len(in.PreferredAntiAffinityTerms) > 0
	if pl.args.IgnorePreferredTermsOfExistingPods && !hasConstraints {
		return plugin.NewStatus(plugin.Skip)
	}
	// Unless the pod has preferred terms, only pods with affinity terms matter.
	list := pl.nodesWithAffinityPods
	if hasConstraints {
		list = pl.allNodes
	}
	all, err := list()
	if err != nil {
		return plugin.AsStatus(err)
	}
	m := scoreMap{}
	inNSLabels := pl.nsLabels(pod.Namespace)
	for _, n := range all {
		node := n.Node()
		if node == nil {
			continue
		}
		pods := n.PodsWithAffinity
		if hasConstraints {
			pods = n.Pods
		}
		for _, existing := range pods {
			pl.processExistingPod(m, in, inNSLabels, existing, node)
		}
	}
	if len(m) == 0 {
		return plugin.NewStatus(plugin.Skip)
	}
	state.Write(preScoreStateKey, &preScoreState{topologyScore: m})
	return nil
}

// Score sums the scores of the node's domains.
func (pl *InterPodAffinity) Score(_ context.Context, state *plugin.CycleState, _ *corev1.Pod, nodeInfo *plugin.NodeInfo) (int64, *plugin.Status) {
	node := nodeInfo.Node()
	if node == nil {
		return 0, plugin.AsStatus(errNodeNotFound)
	}
	s, err := plugin.ReadState[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return 0, plugin.AsStatus(err)
	}
	var score int64
	for key, values := range s.topologyScore {
		if v, ok := node.Labels[key]; ok {
			score += values[v]
		}
	}
	return score, nil
}

// ScoreExtensions returns the plugin, which normalises its scores.
func (pl *InterPodAffinity) ScoreExtensions() plugin.ScoreExtensions { return pl }

// NormalizeScore scales scores linearly so the lowest gets 0 and the highest
// MaxNodeScore (all 0 when they are equal).
func (pl *InterPodAffinity) NormalizeScore(_ context.Context, state *plugin.CycleState, _ *corev1.Pod, scores plugin.NodeScoreList) *plugin.Status {
	s, err := plugin.ReadState[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return plugin.AsStatus(err)
	}
	if len(s.topologyScore) == 0 {
		return nil
	}
	normalize(scores)
	return nil
}

func normalize(scores plugin.NodeScoreList) {
	var lo int64 = math.MaxInt64
	var hi int64 = math.MinInt64
	for _, s := range scores {
		lo, hi = min(lo, s.Score), max(hi, s.Score)
	}
	diff := hi - lo
	for i := range scores {
		f := float64(0)
		if diff > 0 {
			f = float64(plugin.MaxNodeScore) * float64(scores[i].Score-lo) / float64(diff)
		}
		scores[i].Score = int64(f)
	}
}

// selectsNamespacesByLabelW reports whether a weighted term has a
// namespaceSelector.
func selectsNamespacesByLabelW(terms []plugin.WeightedAffinityTerm) bool {
	for i := range terms {
		if terms[i].NamespaceSelector != labels.Nothing() {
			return true
		}
	}
	return false
}
