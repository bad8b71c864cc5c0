package rbac

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// RuleAllows reports whether rule grants the action a.
func RuleAllows(a filters.Attributes, rule *rbacv1.PolicyRule) bool {
	if !verbMatches(rule, a.Verb) {
		return false
	}
	if !a.ResourceRequest {
		return nonResourceURLMatches(rule, a.Path)
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined += "/" + a.Subresource
	}
	return apiGroupMatches(rule, a.APIGroup) && resourceMatches(rule, combined, a.Subresource) &&
		(len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, a.Name))
}

func verbMatches(r *rbacv1.PolicyRule, verb string) bool {
	return slices.Contains(r.Verbs, rbacv1.VerbAll) || slices.Contains(r.Verbs, verb)
}

func apiGroupMatches(r *rbacv1.PolicyRule, group string) bool {
	return slices.Contains(r.APIGroups, rbacv1.APIGroupAll) || slices.Contains(r.APIGroups, group)
}

func resourceMatches(r *rbacv1.PolicyRule, combined, sub string) bool {
	for _, res := range r.Resources {
		if res == rbacv1.ResourceAll || res == combined {
			return true
		}
		if sub != "" && len(res) == len(sub)+2 && strings.HasPrefix(res, "*/") && strings.HasSuffix(res, sub) {
			return true
		}
	}
	return false
}

func nonResourceURLMatches(r *rbacv1.PolicyRule, path string) bool {
	for _, u := range r.NonResourceURLs {
		if u == rbacv1.NonResourceAll || u == path ||
			(strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimSuffix(u, "*"))) {
			return true
		}
	}
	return false
}

// appliesTo reports whether subject names u; bindingNamespace defaults a
// ServiceAccount subject's namespace.
func appliesTo(u *filters.User, s rbacv1.Subject, bindingNamespace string) bool {
	switch s.Kind {
	case rbacv1.UserKind:
		return u.Name == s.Name
	case rbacv1.GroupKind:
		return u.InGroup(s.Name)
	case rbacv1.ServiceAccountKind:
		ns := s.Namespace
		if ns == "" {
			ns = bindingNamespace
		}
		return ns != "" && u.Name == filters.ServiceAccountUsernamePrefix+ns+":"+s.Name
	}
	return false
}

// Covers reports whether owner grants everything servant does, and the atomic
// rules (one verb, group, resource, name or URL each) it does not.
func Covers(owner, servant []rbacv1.PolicyRule) (bool, []rbacv1.PolicyRule) {
	var missing []rbacv1.PolicyRule
	for _, s := range servant {
		for _, atom := range breakdown(s) {
			if !slices.ContainsFunc(owner, func(o rbacv1.PolicyRule) bool { return ruleCovers(&o, &atom) }) {
				missing = append(missing, atom)
			}
		}
	}
	return len(missing) == 0, missing
}

func breakdown(r rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, verb := range r.Verbs {
		for _, u := range r.NonResourceURLs {
			out = append(out, rbacv1.PolicyRule{Verbs: []string{verb}, NonResourceURLs: []string{u}})
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				if len(r.ResourceNames) == 0 {
					out = append(out, rbacv1.PolicyRule{Verbs: []string{verb}, APIGroups: []string{g}, Resources: []string{res}})
				}
				for _, n := range r.ResourceNames {
					out = append(out, rbacv1.PolicyRule{Verbs: []string{verb}, APIGroups: []string{g}, Resources: []string{res}, ResourceNames: []string{n}})
				}
			}
		}
	}
	return out
}

func hasAll(have, want []string, all string) bool {
	if slices.Contains(have, all) {
		return true
	}
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func ruleCovers(owner, sub *rbacv1.PolicyRule) bool {
	if !hasAll(owner.Verbs, sub.Verbs, rbacv1.VerbAll) || !hasAll(owner.APIGroups, sub.APIGroups, rbacv1.APIGroupAll) {
		return false
	}
	for _, u := range sub.NonResourceURLs {
		if !nonResourceURLMatches(owner, u) {
			return false
		}
	}
	for _, res := range sub.Resources {
		if slices.Contains(owner.Resources, rbacv1.ResourceAll) || slices.Contains(owner.Resources, res) {
			continue
		}
		name, sub, hasSub := strings.Cut(res, "/")
		if hasSub && (slices.Contains(owner.Resources, name+"/*") || slices.Contains(owner.Resources, "*/"+sub)) {
			continue
		}
		return false
	}
	return len(owner.ResourceNames) == 0 || hasAll(owner.ResourceNames, sub.ResourceNames, "")
}

// CompactString renders a rule like Kubernetes' escalation messages:
// {APIGroups:[""], Resources:["pods"], Verbs:["get"]}.
func CompactString(r rbacv1.PolicyRule) string {
	var parts []string
	if len(r.APIGroups) > 0 {
		parts = append(parts, fmt.Sprintf("APIGroups:%q", r.APIGroups))
	}
	if len(r.Resources) > 0 {
		parts = append(parts, fmt.Sprintf("Resources:%q", r.Resources))
	}
	if len(r.NonResourceURLs) > 0 {
		parts = append(parts, fmt.Sprintf("NonResourceURLs:%q", r.NonResourceURLs))
	}
	if len(r.ResourceNames) > 0 {
		parts = append(parts, fmt.Sprintf("ResourceNames:%q", r.ResourceNames))
	}
	if len(r.Verbs) > 0 {
		parts = append(parts, fmt.Sprintf("Verbs:%q", r.Verbs))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
