package interpodaffinity

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/api/labels"
)

const preFilterStateKey plugin.StateKey = "PreFilter" + Name

// preFilterState holds the counts Filter checks.
type preFilterState struct {
	// existingAntiAffinityCounts: domains holding a pod whose required
	// anti-affinity term matches the incoming pod.
	existingAntiAffinityCounts topologyToMatchedTermCount
	// affinityCounts: domains of the incoming pod's required affinity terms
	// holding a pod matching all of them.
	affinityCounts topologyToMatchedTermCount
	// antiAffinityCounts: domains of the incoming pod's required anti-affinity
	// terms holding a pod matching the term.
	antiAffinityCounts topologyToMatchedTermCount
	podInfo            *plugin.PodInfo
	nsLabels           func(ns string) map[string]string
}

// Clone implements plugin.StateData.
func (s *preFilterState) Clone() plugin.StateData {
	if s == nil {
		return nil
	}
	return &preFilterState{
		existingAntiAffinityCounts: s.existingAntiAffinityCounts.clone(),
		affinityCounts:             s.affinityCounts.clone(),
		antiAffinityCounts:         s.antiAffinityCounts.clone(),
		podInfo:                    s.podInfo,
		nsLabels:                   s.nsLabels,
	}
}

// updateWithPod adds (delta 1) or removes (-1) pi's pod on node to the counts.
func (s *preFilterState) updateWithPod(pi *plugin.PodInfo, node *corev1.Node, delta int64) {
	if s == nil || node == nil {
		return
	}
	in := s.podInfo.Pod
	s.existingAntiAffinityCounts.updateWithAntiAffinityTerms(pi.RequiredAntiAffinityTerms, in, s.nsLabels(in.Namespace), node, delta)
	s.affinityCounts.updateWithAffinityTerms(s.podInfo.RequiredAffinityTerms, pi.Pod, s.nsLabels(pi.Pod.Namespace), node, delta)
	s.antiAffinityCounts.updateWithAntiAffinityTerms(s.podInfo.RequiredAntiAffinityTerms, pi.Pod, s.nsLabels(pi.Pod.Namespace), node, delta)
}

// calPreFilterState counts over nodes (all nodes of the cycle).
func calPreFilterState(pi *plugin.PodInfo, nodes []*plugin.NodeInfo, nsLabels func(string) map[string]string) *preFilterState {
	s := &preFilterState{
		existingAntiAffinityCounts: topologyToMatchedTermCount{},
		affinityCounts:             topologyToMatchedTermCount{},
		antiAffinityCounts:         topologyToMatchedTermCount{},
		podInfo:                    pi,
		nsLabels:                   nsLabels,
	}
	in := pi.Pod
	inLabels := nsLabels(in.Namespace)
	hasIncoming := len(pi.RequiredAffinityTerms)+len(pi.RequiredAntiAffinityTerms) > 0
	// The existing pods' namespace labels are looked up only for terms that
	// select namespaces by label.
	needNS := selectsNamespacesByLabel(pi.RequiredAffinityTerms) || selectsNamespacesByLabel(pi.RequiredAntiAffinityTerms)
	for _, n := range nodes {
		node := n.Node()
		if node == nil {
			continue
		}
		for _, existing := range n.PodsWithRequiredAntiAffinity {
			s.existingAntiAffinityCounts.updateWithAntiAffinityTerms(existing.RequiredAntiAffinityTerms, in, inLabels, node, 1)
		}
		if !hasIncoming {
			continue
		}
		for _, existing := range n.Pods {
			var l map[string]string
			if needNS {
				l = nsLabels(existing.Pod.Namespace)
			}
			s.affinityCounts.updateWithAffinityTerms(pi.RequiredAffinityTerms, existing.Pod, l, node, 1)
			s.antiAffinityCounts.updateWithAntiAffinityTerms(pi.RequiredAntiAffinityTerms, existing.Pod, l, node, 1)
		}
	}
	return s
}

// satisfyExistingPodsAntiAffinity: no domain of the node holds a pod whose
// anti-affinity matches the incoming pod.
func (s *preFilterState) satisfyExistingPodsAntiAffinity(node *corev1.Node) bool {
	if len(s.existingAntiAffinityCounts) == 0 {
		return true
	}
	for k, v := range node.Labels {
		if s.existingAntiAffinityCounts[topologyPair{k, v}] > 0 {
			return false
		}
	}
	return true
}

// satisfyPodAntiAffinity: no domain of the incoming pod's anti-affinity terms
// holds a matching pod.
func (s *preFilterState) satisfyPodAntiAffinity(node *corev1.Node) bool {
	if len(s.antiAffinityCounts) == 0 {
		return true
	}
	for _, t := range s.podInfo.RequiredAntiAffinityTerms {
		if v, ok := node.Labels[t.TopologyKey]; ok && s.antiAffinityCounts[topologyPair{t.TopologyKey, v}] > 0 {
			return false
		}
	}
	return true
}

// satisfyPodAffinity: the node has every term's topology key and each term's
// domain holds a pod matching all terms, or no pod anywhere matches and the
// incoming pod matches its own terms (the first pod of a group).
func (s *preFilterState) satisfyPodAffinity(node *corev1.Node) bool {
	podsExist := true
	for _, t := range s.podInfo.RequiredAffinityTerms {
		v, ok := node.Labels[t.TopologyKey]
		if !ok {
			return false
		}
		if s.affinityCounts[topologyPair{t.TopologyKey, v}] <= 0 {
			podsExist = false
		}
	}
	if podsExist {
		return true
	}
	in := s.podInfo.Pod
	return len(s.affinityCounts) == 0 && podMatchesAllAffinityTerms(s.podInfo.RequiredAffinityTerms, in, s.nsLabels(in.Namespace))
}

// filter checks node in Kubernetes' order: affinity, anti-affinity, then
// existing pods' anti-affinity.
func (s *preFilterState) filter(node *corev1.Node) *plugin.Status {
	if !s.satisfyPodAffinity(node) {
		return plugin.NewStatus(plugin.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
	}
	if !s.satisfyPodAntiAffinity(node) {
		return plugin.NewStatus(plugin.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
	}
	if !s.satisfyExistingPodsAntiAffinity(node) {
		return plugin.NewStatus(plugin.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
	}
	return nil
}

// PreFilter counts the domains of the required terms; Skip when the pod has no
// required terms and no pod on any node has required anti-affinity.
func (pl *InterPodAffinity) PreFilter(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, nodes []*plugin.NodeInfo) (*plugin.PreFilterResult, *plugin.Status) {
	pi, err := plugin.PodInfoFor(state, pod)
	if err != nil {
		return nil, plugin.NewStatus(plugin.UnschedulableAndUnresolvable, fmt.Sprintf("parsing pod: %v", err))
	}
	if len(pi.RequiredAffinityTerms)+len(pi.RequiredAntiAffinityTerms) == 0 && !pl.anyRequiredAntiAffinity(nodes) {
		return nil, plugin.NewStatus(plugin.Skip)
	}
	state.Write(preFilterStateKey, calPreFilterState(pi, nodes, pl.nsLabels))
	return nil, nil
}

func (pl *InterPodAffinity) anyRequiredAntiAffinity(nodes []*plugin.NodeInfo) bool {
	if pl.nodesWithRequiredAntiAffinityPods != nil {
		if list, err := pl.nodesWithRequiredAntiAffinityPods(); err == nil {
			return len(list) > 0
		}
	}
	for _, n := range nodes {
		if len(n.PodsWithRequiredAntiAffinity) > 0 {
			return true
		}
	}
	return false
}

// PreFilterExtensions returns the plugin: it updates its counts when
// preemption simulates adding or removing pods.
func (pl *InterPodAffinity) PreFilterExtensions() plugin.PreFilterExtensions { return pl }

// AddPod counts podInfoToAdd on nodeInfo.
func (pl *InterPodAffinity) AddPod(_ context.Context, state *plugin.CycleState, _ *corev1.Pod, podInfoToAdd *plugin.PodInfo, nodeInfo *plugin.NodeInfo) *plugin.Status {
	s, err := plugin.ReadState[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return plugin.AsStatus(err)
	}
	s.updateWithPod(podInfoToAdd, nodeInfo.Node(), 1)
	return nil
}

// RemovePod uncounts podInfoToRemove on nodeInfo.
func (pl *InterPodAffinity) RemovePod(_ context.Context, state *plugin.CycleState, _ *corev1.Pod, podInfoToRemove *plugin.PodInfo, nodeInfo *plugin.NodeInfo) *plugin.Status {
	s, err := plugin.ReadState[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return plugin.AsStatus(err)
	}
	s.updateWithPod(podInfoToRemove, nodeInfo.Node(), -1)
	return nil
}

// Filter checks the node against the required terms.
func (pl *InterPodAffinity) Filter(_ context.Context, state *plugin.CycleState, _ *corev1.Pod, nodeInfo *plugin.NodeInfo) *plugin.Status {
	node := nodeInfo.Node()
	if node == nil {
		return plugin.AsStatus(errNodeNotFound)
	}
	s, err := plugin.ReadState[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return plugin.AsStatus(err)
	}
	return s.filter(node)
}

// selectsNamespacesByLabel reports whether a term has a namespaceSelector.
func selectsNamespacesByLabel(terms []plugin.AffinityTerm) bool {
	for i := range terms {
		if terms[i].NamespaceSelector != labels.Nothing() {
			return true
		}
	}
	return false
}
