package quota

import (
	"strings"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

// Evaluator knows how the objects of one resource consume quota. Objects are
// in their JSON map form (what admission sees; the controller converts).
type Evaluator interface {
	// GroupResource is the resource whose objects the evaluator charges.
	GroupResource() api.GroupResource
	// Handles reports whether an admission request can change usage: creates,
	// and for some resources updates of the main resource.
	Handles(op admission.Operation, subresource string, obj, old map[string]any) bool
	// MatchingResources returns the names among names that the evaluator
	// charges.
	MatchingResources(names []string) []string
	// MatchesScope reports whether obj is selected by one scope requirement.
	MatchesScope(req corev1.ScopedResourceSelectorRequirement, obj map[string]any) (bool, error)
	// Usage is what obj consumes at now.
	Usage(obj map[string]any, now time.Time) (corev1.ResourceList, error)
	// Constraints refuses an object that cannot be charged for required
	// (a pod container without a cpu request under a cpu quota).
	Constraints(required []string, obj map[string]any) error
}

// For returns the evaluator of gr: pods, services and persistent volume
// claims have their own; every other resource is counted as objects
// (count/<resource>.<group>, and the legacy names of core resources such as
// configmaps and secrets).
func For(gr api.GroupResource) Evaluator {
	if gr.Group == "" {
		switch gr.Resource {
		case "pods":
			return podEvaluator{}
		case "services":
			return serviceEvaluator{}
		case "persistentvolumeclaims":
			return pvcEvaluator{}
		}
	}
	return countEvaluator{gr: gr}
}

// Ignored reports whether quota never charges the objects of gr, as
// Kubernetes' quota configuration ignores them: core/v1 events, which are
// written by the system on behalf of every user and must never be refused
// for quota (a quota naming count/events shows no usage for it).
func Ignored(gr api.GroupResource) bool {
	return gr.Group == "" && gr.Resource == "events"
}

// ObjectCountName is the quota name that counts the objects of gr:
// count/<resource> in the core group, count/<resource>.<group> otherwise.
func ObjectCountName(gr api.GroupResource) string {
	if gr.Group == "" {
		return "count/" + gr.Resource
	}
	return "count/" + gr.Resource + "." + gr.Group
}

// legacyCountNames are the core resources whose object count also has a
// name without the count/ prefix.
var legacyCountNames = []string{"configmaps", "secrets", "replicationcontrollers", "resourcequotas"}

// GroupResourcesFor returns the resources whose objects must be listed to
// compute usage of names, once each, in a stable order.
func GroupResourcesFor(names []string) []api.GroupResource {
	var out []api.GroupResource
	add := func(gr api.GroupResource) {
		for _, o := range out {
			if o == gr {
				return
			}
		}
		out = append(out, gr)
	}
	for _, n := range names {
		switch {
		case len(podEvaluator{}.MatchingResources([]string{n})) > 0:
			add(api.GroupResource{Resource: "pods"})
		case len(serviceEvaluator{}.MatchingResources([]string{n})) > 0:
			add(api.GroupResource{Resource: "services"})
		case len(pvcEvaluator{}.MatchingResources([]string{n})) > 0:
			add(api.GroupResource{Resource: "persistentvolumeclaims"})
		case strings.HasPrefix(n, "count/"):
			res, group, _ := strings.Cut(strings.TrimPrefix(n, "count/"), ".")
			add(api.GroupResource{Group: group, Resource: res})
		default:
			for _, l := range legacyCountNames {
				if n == l {
					add(api.GroupResource{Resource: l})
				}
			}
		}
	}
	return out
}

// ScopeSelectors returns the scope requirements of q: each of spec.scopes as
// an Exists requirement, then spec.scopeSelector's.
func ScopeSelectors(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		out = append(out, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}

// MatchesScopes reports whether every scope requirement of q selects obj.
func MatchesScopes(e Evaluator, q *corev1.ResourceQuota, obj map[string]any) (bool, error) {
	for _, req := range ScopeSelectors(q) {
		ok, err := e.MatchesScope(req, obj)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// countEvaluator counts the objects of any resource.
type countEvaluator struct{ gr api.GroupResource }

func (e countEvaluator) GroupResource() api.GroupResource { return e.gr }

func (e countEvaluator) names() []string {
	out := []string{ObjectCountName(e.gr)}
	if e.gr.Group == "" {
		for _, l := range legacyCountNames {
			if l == e.gr.Resource {
				out = append(out, l)
			}
		}
	}
	return out
}

// Handles: object counts change on create only.
func (countEvaluator) Handles(op admission.Operation, subresource string, _, _ map[string]any) bool {
	return op == admission.Create && subresource == ""
}

func (e countEvaluator) MatchingResources(names []string) []string {
	return Intersection(names, e.names())
}

// MatchesScope: scopes select pods (and claims) only.
func (countEvaluator) MatchesScope(corev1.ScopedResourceSelectorRequirement, map[string]any) (bool, error) {
	return false, nil
}

func (e countEvaluator) Usage(map[string]any, time.Time) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for _, n := range e.names() {
		out[n] = one
	}
	return out, nil
}

func (countEvaluator) Constraints([]string, map[string]any) error { return nil }

// matchValues applies an In/NotIn/Exists/DoesNotExist requirement to a
// single value (empty: absent).
func matchValues(req corev1.ScopedResourceSelectorRequirement, value string) bool {
	switch req.Operator {
	case corev1.ScopeSelectorOpIn:
		for _, v := range req.Values {
			if v == value && value != "" {
				return true
			}
		}
		return false
	case corev1.ScopeSelectorOpNotIn:
		for _, v := range req.Values {
			if v == value {
				return false
			}
		}
		return true
	case corev1.ScopeSelectorOpExists:
		return value != ""
	case corev1.ScopeSelectorOpDoesNotExist:
		return value == ""
	}
	return false
}
