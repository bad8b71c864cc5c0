package admissionpolicy

import (
	"slices"

	admissionregistrationv1 "github.com/converge-dev/converge/builtin/api/admissionregistration/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

// request is what matching needs of a request.
type request struct {
	*admission.Attributes
	// nsLabels returns the labels of the request's namespace.
	nsLabels func() (map[string]string, error)
	// equivalents are the same group-resource in other served versions.
	equivalents func() []admission.EquivalentResource
}

// ruleMatches reports whether r selects a (operation, group, version,
// resource/subresource, scope, resourceNames).
func ruleMatches(r admissionregistrationv1.NamedRuleWithOperations, a *admission.Attributes) bool {
	ar := admission.Rule{Operations: r.Operations, APIGroups: r.APIGroups, APIVersions: r.APIVersions, Resources: r.Resources, Scope: "*"}
	if r.Scope != nil {
		ar.Scope = *r.Scope
	}
	if !ar.Matches(a) {
		return false
	}
	if len(r.ResourceNames) == 0 {
		return true
	}
	name := a.Name
	if name == "" && a.Object != nil {
		name = api.NestedString(a.Object, "metadata", "name")
	}
	return slices.Contains(r.ResourceNames, name)
}

// matchResult is how a MatchResources selected a request.
type matchResult struct {
	// eq is the equivalent resource the rules named (matchPolicy
	// Equivalent), nil when they named the request's own.
	eq *admission.EquivalentResource
}

// matches applies m to req: selectors, excluded rules, then rules (none:
// every resource, as for a binding's matchResources). ok is false when m does
// not select req; err is a selector that cannot be applied.
func matches(m *admissionregistrationv1.MatchResources, req *request) (res matchResult, ok bool, err error) {
	if m == nil {
		return res, true, nil
	}
	if ok, err := admission.MatchSelectors(req.Attributes, m.ObjectSelector, m.NamespaceSelector, req.nsLabels); err != nil || !ok {
		return res, false, err
	}
	a := req.Attributes
	if slices.ContainsFunc(m.ExcludeResourceRules, func(r admissionregistrationv1.NamedRuleWithOperations) bool { return ruleMatches(r, a) }) {
		return res, false, nil
	}
	if len(m.ResourceRules) == 0 {
		return res, true, nil
	}
	if slices.ContainsFunc(m.ResourceRules, func(r admissionregistrationv1.NamedRuleWithOperations) bool { return ruleMatches(r, a) }) {
		return res, true, nil
	}
	if (m.MatchPolicy != nil && *m.MatchPolicy == "Exact") || req.equivalents == nil {
		return res, false, nil
	}
	if a.Subresource != "" && a.Subresource != "status" {
		return res, false, nil
	}
	for _, e := range req.equivalents() {
		b := *a
		b.Resource, b.Kind = e.Resource, e.Kind
		if slices.ContainsFunc(m.ExcludeResourceRules, func(r admissionregistrationv1.NamedRuleWithOperations) bool { return ruleMatches(r, &b) }) {
			return res, false, nil
		}
		if slices.ContainsFunc(m.ResourceRules, func(r admissionregistrationv1.NamedRuleWithOperations) bool { return ruleMatches(r, &b) }) {
			return matchResult{eq: &e}, true, nil
		}
	}
	return res, false, nil
}
