package plugin

import (
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
)

// AffinityTerm is a parsed PodAffinityTerm: the namespaces it applies to, its
// label selector (with matchLabelKeys/mismatchLabelKeys merged in) and its
// topology key.
type AffinityTerm struct {
	// Namespaces lists the namespaces named by the term; when neither it nor
	// NamespaceSelector is set it holds the pod's own namespace.
	Namespaces map[string]struct{}
	// Selector selects the pods the term is about.
	Selector labels.Selector
	// TopologyKey is the node label grouping nodes into domains.
	TopologyKey string
	// NamespaceSelector selects further namespaces by their labels; Nothing when
	// unset.
	NamespaceSelector labels.Selector
}

// Matches reports whether pod is selected by the term; nsLabels are the labels
// of the pod's namespace.
func (t *AffinityTerm) Matches(pod *corev1.Pod, nsLabels map[string]string) bool {
	if _, ok := t.Namespaces[pod.Namespace]; ok || t.NamespaceSelector.Matches(nsLabels) {
		return t.Selector.Matches(pod.Labels)
	}
	return false
}

// WeightedAffinityTerm is a preferred AffinityTerm with its weight.
type WeightedAffinityTerm struct {
	AffinityTerm
	Weight int32
}

// PodInfo is a pod with the derived data plugins need, computed once: its
// requests and parsed affinity terms.
type PodInfo struct {
	Pod *corev1.Pod
	// Requests are the effective requests (ComputePodRequests, nonZero=false).
	Requests *Resource
	// NonZeroRequests are the requests with scoring defaults applied.
	NonZeroRequests            *Resource
	RequiredAffinityTerms      []AffinityTerm
	RequiredAntiAffinityTerms  []AffinityTerm
	PreferredAffinityTerms     []WeightedAffinityTerm
	PreferredAntiAffinityTerms []WeightedAffinityTerm
	// hasHostPorts is set when a container asks for a host port.
	hasHostPorts bool
	// parseErr is the error of the last Update (an affinity term that did not
	// parse).
	parseErr error
}

// PodInfoFor returns the PodInfo the scheduler computed for pod when it
// started the cycle (see CycleState.SetPodInfo), or a new one; the error is
// NewPodInfo's. PreFilter and PreScore plugins use it instead of deriving the
// pod's requests and affinity terms again.
func PodInfoFor(state *CycleState, pod *corev1.Pod) (*PodInfo, error) {
	if state != nil && state.podInfo != nil && state.podInfo.Pod == pod {
		return state.podInfo, state.podInfo.parseErr
	}
	return NewPodInfo(pod)
}

// NewPodInfo derives a PodInfo. An error means an affinity term could not be
// parsed; the returned PodInfo is still usable (the bad term is dropped).
func NewPodInfo(pod *corev1.Pod) (*PodInfo, error) {
	pi := &PodInfo{}
	err := pi.Update(pod)
	return pi, err
}

// Update recomputes the derived data for a new version of the pod.
func (pi *PodInfo) Update(pod *corev1.Pod) error {
	pi.Pod = pod
	pi.Requests = ComputePodRequests(pod, false)
	pi.NonZeroRequests = ComputePodRequests(pod, true)
	pi.hasHostPorts = false
	for i := range pod.Spec.Containers {
		for _, p := range pod.Spec.Containers[i].Ports {
			if p.HostPort > 0 {
				pi.hasHostPorts = true
			}
		}
	}
	pi.RequiredAffinityTerms, pi.RequiredAntiAffinityTerms = nil, nil
	pi.PreferredAffinityTerms, pi.PreferredAntiAffinityTerms = nil, nil
	pi.parseErr = nil
	aff := pod.Spec.Affinity
	if aff == nil {
		return nil
	}
	var errs []error
	parse := func(terms []corev1.PodAffinityTerm) []AffinityTerm {
		var out []AffinityTerm
		for i := range terms {
			t, err := NewAffinityTerm(pod, &terms[i])
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, *t)
		}
		return out
	}
	parseWeighted := func(terms []corev1.WeightedPodAffinityTerm) []WeightedAffinityTerm {
		var out []WeightedAffinityTerm
		for i := range terms {
			if terms[i].Weight == 0 {
				continue
			}
			t, err := NewAffinityTerm(pod, &terms[i].PodAffinityTerm)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, WeightedAffinityTerm{AffinityTerm: *t, Weight: terms[i].Weight})
		}
		return out
	}
	if a := aff.PodAffinity; a != nil {
		pi.RequiredAffinityTerms = parse(a.RequiredDuringSchedulingIgnoredDuringExecution)
		pi.PreferredAffinityTerms = parseWeighted(a.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if a := aff.PodAntiAffinity; a != nil {
		pi.RequiredAntiAffinityTerms = parse(a.RequiredDuringSchedulingIgnoredDuringExecution)
		pi.PreferredAntiAffinityTerms = parseWeighted(a.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if len(errs) > 0 {
		pi.parseErr = fmt.Errorf("parse affinity terms of pod %s/%s: %v", pod.Namespace, pod.Name, errs)
	}
	return pi.parseErr
}

// NewAffinityTerm parses one term of pod.
func NewAffinityTerm(pod *corev1.Pod, term *corev1.PodAffinityTerm) (*AffinityTerm, error) {
	ls := term.LabelSelector
	if ls != nil && (len(term.MatchLabelKeys) > 0 || len(term.MismatchLabelKeys) > 0) {
		merged := &api.LabelSelector{MatchLabels: ls.MatchLabels, MatchExpressions: append([]api.LabelSelectorRequirement(nil), ls.MatchExpressions...)}
		for _, k := range term.MatchLabelKeys {
			if v, ok := pod.Labels[k]; ok {
				merged.MatchExpressions = append(merged.MatchExpressions, api.LabelSelectorRequirement{Key: k, Operator: api.LabelSelectorOpIn, Values: []string{v}})
			}
		}
		for _, k := range term.MismatchLabelKeys {
			if v, ok := pod.Labels[k]; ok {
				merged.MatchExpressions = append(merged.MatchExpressions, api.LabelSelectorRequirement{Key: k, Operator: api.LabelSelectorOpNotIn, Values: []string{v}})
			}
		}
		ls = merged
	}
	sel, err := labels.FromLabelSelector(ls)
	if err != nil {
		return nil, err
	}
	t := &AffinityTerm{Selector: sel, TopologyKey: term.TopologyKey, Namespaces: map[string]struct{}{}, NamespaceSelector: labels.Nothing()}
	for _, ns := range term.Namespaces {
		t.Namespaces[ns] = struct{}{}
	}
	if term.NamespaceSelector != nil {
		if t.NamespaceSelector, err = labels.FromLabelSelector(term.NamespaceSelector); err != nil {
			return nil, err
		}
	}
	if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
		t.Namespaces[pod.Namespace] = struct{}{}
	}
	return t, nil
}
