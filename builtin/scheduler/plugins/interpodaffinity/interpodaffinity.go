package interpodaffinity

import (
	"context"
	"errors"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/cache"
)

// Name is the plugin's name in the registry and in configuration.
const Name = "InterPodAffinity"

// Failure reasons, worded like kube-scheduler's.
const (
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
	ErrReasonAffinityRulesNotMatch             = "node(s) didn't match pod affinity rules"
	ErrReasonAntiAffinityRulesNotMatch         = "node(s) didn't match pod anti-affinity rules"
)

// DefaultHardPodAffinityWeight is Kubernetes' default Args.HardPodAffinityWeight.
const DefaultHardPodAffinityWeight int32 = 1

var errNodeNotFound = errors.New("interpodaffinity: node not found")

// Args configure the plugin (Kubernetes' InterPodAffinityArgs).
type Args struct {
	// HardPodAffinityWeight is the score an existing pod's required affinity
	// term adds when it matches the incoming pod, in [0, 100].
	HardPodAffinityWeight int32 `json:"hardPodAffinityWeight"`
	// IgnorePreferredTermsOfExistingPods skips existing pods' terms when the
	// incoming pod has no preferred terms of its own.
	IgnorePreferredTermsOfExistingPods bool `json:"ignorePreferredTermsOfExistingPods,omitempty"`
}

// InterPodAffinity is the plugin.
type InterPodAffinity struct {
	args Args
	// nsLabels returns the labels of a namespace (nil if unknown).
	nsLabels func(ns string) map[string]string
	// allNodes and nodesWithAffinityPods read the cycle's snapshot (PreScore).
	allNodes              func() ([]*plugin.NodeInfo, error)
	nodesWithAffinityPods func() ([]*plugin.NodeInfo, error)
	// nodesWithRequiredAntiAffinityPods reads the snapshot's list of nodes
	// with such pods (PreFilter); nil: PreFilter scans its nodes.
	nodesWithRequiredAntiAffinityPods func() ([]*plugin.NodeInfo, error)
}

var (
	_ plugin.PreFilterPlugin     = (*InterPodAffinity)(nil)
	_ plugin.FilterPlugin        = (*InterPodAffinity)(nil)
	_ plugin.PreScorePlugin      = (*InterPodAffinity)(nil)
	_ plugin.ScorePlugin         = (*InterPodAffinity)(nil)
	_ plugin.EnqueueExtensions   = (*InterPodAffinity)(nil)
	_ plugin.PreFilterExtensions = (*InterPodAffinity)(nil)
)

// New is the plugin factory: args are Args (nil: HardPodAffinityWeight 1). It
// reads nodes from h's snapshot and namespace labels from h's namespace
// informer (requested here); without informers, namespaceSelectors match no
// namespace.
func New(_ context.Context, args any, h plugin.Handle) (plugin.Plugin, error) {
	a := Args{HardPodAffinityWeight: DefaultHardPodAffinityWeight}
	if err := plugin.DecodeArgs(args, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	if a.HardPodAffinityWeight < 0 || a.HardPodAffinityWeight > 100 {
		return nil, fmt.Errorf("%s: hardPodAffinityWeight %d is not in the range [0, 100]", Name, a.HardPodAffinityWeight)
	}
	pl := &InterPodAffinity{
		args:     a,
		nsLabels: func(string) map[string]string { return nil },
		allNodes: func() ([]*plugin.NodeInfo, error) { return h.SnapshotSharedLister().NodeInfos().List() },
		nodesWithAffinityPods: func() ([]*plugin.NodeInfo, error) {
			return h.SnapshotSharedLister().NodeInfos().HavePodsWithAffinityList()
		},
		nodesWithRequiredAntiAffinityPods: func() ([]*plugin.NodeInfo, error) {
			return h.SnapshotSharedLister().NodeInfos().HavePodsWithRequiredAntiAffinityList()
		},
	}
	if inf := h.Informers(); inf != nil {
		nss, err := cache.InformerFor(inf, cache.InformerOptions[*corev1.Namespace]{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
		pl.nsLabels = func(ns string) map[string]string {
			if n, ok := nss.Store().Get(ns); ok {
				return n.Labels
			}
			return nil
		}
	}
	return pl, nil
}

// Name implements plugin.Plugin.
func (pl *InterPodAffinity) Name() string { return Name }

// EventsToRegister: pods coming, going or relabelled and nodes added or
// relabelled may satisfy the terms.
func (pl *InterPodAffinity) EventsToRegister() []plugin.ClusterEventWithHint {
	return []plugin.ClusterEventWithHint{
		{Event: plugin.ClusterEvent{Resource: plugin.Pod, ActionType: plugin.Add | plugin.UpdatePodLabel | plugin.Delete}},
		{Event: plugin.ClusterEvent{Resource: plugin.Node, ActionType: plugin.Add | plugin.UpdateNodeLabel}},
	}
}

// topologyPair is one domain: a topology key and its value.
type topologyPair struct {
	key   string
	value string
}

// topologyToMatchedTermCount counts matching (pod, term) pairs per domain.
type topologyToMatchedTermCount map[topologyPair]int64

func (m topologyToMatchedTermCount) clone() topologyToMatchedTermCount {
	c := make(topologyToMatchedTermCount, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func (m topologyToMatchedTermCount) update(node *corev1.Node, key string, delta int64) {
	v, ok := node.Labels[key]
	if !ok {
		return
	}
	p := topologyPair{key, v}
	if m[p] += delta; m[p] == 0 {
		delete(m, p)
	}
}

// updateWithAffinityTerms counts every term's domain when pod matches all terms.
func (m topologyToMatchedTermCount) updateWithAffinityTerms(terms []plugin.AffinityTerm, pod *corev1.Pod, nsLabels map[string]string, node *corev1.Node, delta int64) {
	if podMatchesAllAffinityTerms(terms, pod, nsLabels) {
		for _, t := range terms {
			m.update(node, t.TopologyKey, delta)
		}
	}
}

// updateWithAntiAffinityTerms counts the domain of every term pod matches.
func (m topologyToMatchedTermCount) updateWithAntiAffinityTerms(terms []plugin.AffinityTerm, pod *corev1.Pod, nsLabels map[string]string, node *corev1.Node, delta int64) {
	for i := range terms {
		if terms[i].Matches(pod, nsLabels) {
			m.update(node, terms[i].TopologyKey, delta)
		}
	}
}

// podMatchesAllAffinityTerms reports whether pod matches every term (false for
// no terms).
func podMatchesAllAffinityTerms(terms []plugin.AffinityTerm, pod *corev1.Pod, nsLabels map[string]string) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(pod, nsLabels) {
			return false
		}
	}
	return true
}
