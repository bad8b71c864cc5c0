package rbac

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// Lister reads the objects of a resource (stored JSON, all namespaces when
// namespace is empty) with a revision that changes whenever they do;
// apiserver.Server.CachedObjects is one.
type Lister func(ctx context.Context, gvr api.GroupVersionResource, namespace string) ([][]byte, int64, error)

var (
	rolesGVR               = rbacv1.GroupVersion.WithResource("roles")
	clusterRolesGVR        = rbacv1.GroupVersion.WithResource("clusterroles")
	roleBindingsGVR        = rbacv1.GroupVersion.WithResource("rolebindings")
	clusterRoleBindingsGVR = rbacv1.GroupVersion.WithResource("clusterrolebindings")
)

// Authorizer evaluates RBAC policy. It allows or has no opinion; it never denies.
type Authorizer struct {
	list Lister

	mu    sync.Mutex // guards cache and resolved
	cache map[api.GroupVersionResource]snapshot
	// resolved memoizes each ClusterRole's rules (aggregation resolved) for
	// the ClusterRoles snapshot they were computed from; a new snapshot (any
	// ClusterRole changed) starts it over.
	resolved resolvedRoles
}

type resolvedRoles struct {
	from  []rbacv1.ClusterRole // the snapshot (compared by identity)
	rules map[string][]rbacv1.PolicyRule
}

type snapshot struct {
	rv    int64
	items any // []rbacv1.Role, []rbacv1.ClusterRole, ...
}

var _ filters.Authorizer = (*Authorizer)(nil)

// NewAuthorizer returns an authorizer reading policy through list.
func NewAuthorizer(list Lister) *Authorizer {
	return &Authorizer{list: list, cache: map[api.GroupVersionResource]snapshot{}}
}

func load[T any](ctx context.Context, a *Authorizer, gvr api.GroupVersionResource) ([]T, error) {
	raw, rv, err := a.list(ctx, gvr, "")
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	if s, ok := a.cache[gvr]; ok && s.rv == rv {
		a.mu.Unlock()
		return s.items.([]T), nil
	}
	a.mu.Unlock()
	out := make([]T, 0, len(raw))
	for _, b := range raw {
		var t T
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, fmt.Errorf("decode %s: %w", gvr.Resource, err)
		}
		out = append(out, t)
	}
	a.mu.Lock()
	a.cache[gvr] = snapshot{rv: rv, items: out}
	a.mu.Unlock()
	return out, nil
}

// errNotFound is Kubernetes' text for a missing role.
func errNotFound(kind, name string) error {
	return fmt.Errorf("%s.rbac.authorization.k8s.io %q not found", kind, name)
}

// clusterRoleRules returns a ClusterRole's rules, with the rules of the
// ClusterRoles its aggregationRule selects (recursively).
func clusterRoleRules(all []rbacv1.ClusterRole, name string, seen map[string]bool) ([]rbacv1.PolicyRule, error) {
	if seen[name] {
		return nil, nil
	}
	seen[name] = true
	for i := range all {
		cr := &all[i]
		if cr.Name != name {
			continue
		}
		rules := append([]rbacv1.PolicyRule(nil), cr.Rules...)
		if cr.AggregationRule == nil {
			return rules, nil
		}
		for _, ls := range cr.AggregationRule.ClusterRoleSelectors {
			sel, err := labels.FromLabelSelector(&ls)
			if err != nil || sel.Empty() {
				continue
			}
			for j := range all {
				if all[j].Name != name && sel.Matches(all[j].Labels) {
					more, _ := clusterRoleRules(all, all[j].Name, seen)
					rules = append(rules, more...)
				}
			}
		}
		return rules, nil
	}
	return nil, errNotFound("clusterrole", name)
}

// clusterRoleRules is the package function memoized per ClusterRoles
// snapshot. The rules returned are shared: callers must not change them.
func (a *Authorizer) clusterRoleRules(crs []rbacv1.ClusterRole, name string) ([]rbacv1.PolicyRule, error) {
	same := func() bool {
		return len(a.resolved.from) == len(crs) && unsafe.SliceData(a.resolved.from) == unsafe.SliceData(crs)
	}
	a.mu.Lock()
	if same() {
		if rules, ok := a.resolved.rules[name]; ok {
			a.mu.Unlock()
			return rules, nil
		}
	}
	a.mu.Unlock()
	rules, err := clusterRoleRules(crs, name, map[string]bool{})
	if err != nil {
		return nil, err
	}
	rules = slices.Clip(rules)
	a.mu.Lock()
	if !same() {
		a.resolved = resolvedRoles{from: crs, rules: map[string][]rbacv1.PolicyRule{}}
	}
	a.resolved.rules[name] = rules
	a.mu.Unlock()
	return rules, nil
}

// RoleRefRules returns the rules a roleRef grants in namespace (shared:
// callers must not change them).
func (a *Authorizer) RoleRefRules(ctx context.Context, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "ClusterRole":
		crs, err := load[rbacv1.ClusterRole](ctx, a, clusterRolesGVR)
		if err != nil {
			return nil, err
		}
		return a.clusterRoleRules(crs, ref.Name)
	case "Role":
		roles, err := load[rbacv1.Role](ctx, a, rolesGVR)
		if err != nil {
			return nil, err
		}
		for _, r := range roles {
			if r.Namespace == namespace && r.Name == ref.Name {
				return r.Rules, nil
			}
		}
		return nil, errNotFound("role", ref.Name)
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// visit calls f with the rules of every binding that applies to u in namespace
// (cluster-wide bindings first); f returns false to stop. Resolution errors are
// collected and returned; they do not stop the walk.
func (a *Authorizer) visit(ctx context.Context, u *filters.User, namespace string, f func(source string, rules []rbacv1.PolicyRule) bool) error {
	var errs []error
	crbs, err := load[rbacv1.ClusterRoleBinding](ctx, a, clusterRoleBindingsGVR)
	if err != nil {
		return err
	}
	for _, b := range crbs {
		if !subjectsApply(u, b.Subjects, "") {
			continue
		}
		rules, err := a.RoleRefRules(ctx, b.RoleRef, "")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !f(fmt.Sprintf("ClusterRoleBinding %q of ClusterRole %q", b.Name, b.RoleRef.Name), rules) {
			return nil
		}
	}
	if namespace != "" {
		rbs, err := load[rbacv1.RoleBinding](ctx, a, roleBindingsGVR)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		for _, b := range rbs {
			if b.Namespace != namespace || !subjectsApply(u, b.Subjects, namespace) {
				continue
			}
			rules, err := a.RoleRefRules(ctx, b.RoleRef, namespace)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !f(fmt.Sprintf("RoleBinding %q of %s %q in namespace %q", b.Name, b.RoleRef.Kind, b.RoleRef.Name, namespace), rules) {
				return nil
			}
		}
	}
	return errors.Join(errs...)
}

func subjectsApply(u *filters.User, subjects []rbacv1.Subject, ns string) bool {
	for _, s := range subjects {
		if appliesTo(u, s, ns) {
			return true
		}
	}
	return false
}

// Authorize implements filters.Authorizer.
func (a *Authorizer) Authorize(ctx context.Context, attrs filters.Attributes) (filters.Decision, string, error) {
	if attrs.User == nil {
		return filters.DecisionNoOpinion, "", nil
	}
	var reason string
	err := a.visit(ctx, attrs.User, attrs.Namespace, func(source string, rules []rbacv1.PolicyRule) bool {
		for i := range rules {
			if RuleAllows(attrs, &rules[i]) {
				reason = "RBAC: allowed by " + source
				return false
			}
		}
		return true
	})
	if reason != "" {
		return filters.DecisionAllow, reason, nil
	}
	if err != nil {
		return filters.DecisionNoOpinion, "RBAC: " + err.Error(), err
	}
	return filters.DecisionNoOpinion, "", nil
}

// RulesFor returns every rule granted to u in namespace (cluster-wide rules
// included). An error reports roles that could not be resolved; the rules are
// still the ones found.
func (a *Authorizer) RulesFor(ctx context.Context, u *filters.User, namespace string) ([]rbacv1.PolicyRule, error) {
	var out []rbacv1.PolicyRule
	err := a.visit(ctx, u, namespace, func(_ string, rules []rbacv1.PolicyRule) bool {
		out = append(out, rules...)
		return true
	})
	return out, err
}
