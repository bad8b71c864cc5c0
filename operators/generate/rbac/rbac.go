package rbac

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/operators/generate/markers"
)

// Roles returns the roles the +kubebuilder:rbac markers ask for, named
// roleName unless a marker names its own: ClusterRoles first (no
// namespace), then Roles, each sorted by name.
func Roles(ms []markers.Marker, roleName string) (clusterRoles []rbacv1.ClusterRole, roles []rbacv1.Role) {
	type key struct{ namespace, name string }
	byRole := map[key][]*rule{}
	for _, m := range ms {
		if m.Name != "kubebuilder:rbac" {
			continue
		}
		k := key{m.String("namespace"), cmp.Or(m.String("roleName"), roleName)}
		base := rule{Groups: m.Strings("groups"), ResourceNames: m.Strings("resourceNames"), URLs: m.Strings("urls"),
			Verbs: m.Strings("verbs")}
		res := m.Strings("resources")
		if len(res) == 0 {
			r := base
			byRole[k] = append(byRole[k], &r)
			continue
		}
		for _, re := range res {
			r := base
			r.Resources = []string{re}
			byRole[k] = append(byRole[k], &r)
		}
	}
	keys := make([]key, 0, len(byRole))
	for k := range byRole {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name)) })
	for _, k := range keys {
		rules := normalize(byRole[k])
		if len(rules) == 0 {
			continue
		}
		if k.namespace == "" {
			clusterRoles = append(clusterRoles, rbacv1.ClusterRole{TypeMeta: api.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
				ObjectMeta: api.ObjectMeta{Name: k.name}, Rules: rules})
		} else {
			roles = append(roles, rbacv1.Role{TypeMeta: api.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
				ObjectMeta: api.ObjectMeta{Name: k.name, Namespace: k.namespace}, Rules: rules})
		}
	}
	return clusterRoles, roles
}

type rule struct {
	Groups, Resources, ResourceNames, URLs, Verbs []string
}

func (r *rule) normalize() {
	r.Groups, r.Resources, r.ResourceNames = uniq(r.Groups), uniq(r.Resources), uniq(r.ResourceNames)
	r.URLs, r.Verbs = uniq(r.URLs), uniq(r.Verbs)
}

func uniq(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

func j(s []string) string { return strings.Join(s, "&") }

// key identifies a rule up to its verbs.
func (r *rule) key() string {
	r.normalize()
	return fmt.Sprintf("%s + %s + %s + %s", j(r.Groups), j(r.Resources), j(r.ResourceNames), j(r.URLs))
}

// mergeBy groups rules by k (the key without one list) and joins that list.
func mergeBy(rules map[string]*rule, k func(*rule) string, join func(into, from *rule)) map[string]*rule {
	groups := map[string][]*rule{}
	var order []string
	for _, key := range sortedKeys(rules) {
		r := rules[key]
		gk := k(r)
		if _, ok := groups[gk]; !ok {
			order = append(order, gk)
		}
		groups[gk] = append(groups[gk], r)
	}
	out := map[string]*rule{}
	for _, gk := range order {
		rs := groups[gk]
		for _, other := range rs[1:] {
			join(rs[0], other)
		}
		out[rs[0].key()] = rs[0]
	}
	return out
}

func sortedKeys(m map[string]*rule) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func normalize(in []*rule) []rbacv1.PolicyRule {
	rules := map[string]*rule{}
	for _, r := range in {
		for i, g := range r.Groups {
			if g == "core" {
				r.Groups[i] = ""
			}
		}
		k := r.key()
		if have, ok := rules[k]; ok {
			have.Verbs = uniq(append(have.Verbs, r.Verbs...))
			continue
		}
		rules[k] = r
	}
	verbs := func(r *rule) string { return j(r.Verbs) }
	rules = mergeBy(rules, func(r *rule) string {
		r.normalize()
		return j(r.Groups) + " + " + j(r.ResourceNames) + " + " + j(r.URLs) + " + " + verbs(r)
	}, func(into, from *rule) { into.Resources = append(into.Resources, from.Resources...) })
	rules = mergeBy(rules, func(r *rule) string {
		r.normalize()
		return j(r.Resources) + " + " + j(r.ResourceNames) + " + " + j(r.URLs) + " + " + verbs(r)
	}, func(into, from *rule) { into.Groups = append(into.Groups, from.Groups...) })
	rules = mergeBy(rules, func(r *rule) string {
		r.normalize()
		return j(r.Groups) + " + " + j(r.Resources) + " + " + j(r.ResourceNames) + " + " + verbs(r)
	}, func(into, from *rule) { into.URLs = append(into.URLs, from.URLs...) })
	out := make([]rbacv1.PolicyRule, 0, len(rules))
	for _, k := range sortedKeys(rules) {
		r := rules[k]
		if slices.Contains(r.Verbs, "*") {
			r.Verbs = []string{"*"}
		}
		out = append(out, rbacv1.PolicyRule{APIGroups: r.Groups, Resources: r.Resources, ResourceNames: r.ResourceNames,
			NonResourceURLs: r.URLs, Verbs: r.Verbs})
	}
	return out
}
