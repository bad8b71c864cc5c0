package rbac_test

import (
	"context"
	"encoding/json"
	"testing"

	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/builtin/security/rbac"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// policy is an in-memory RBAC store whose revision moves on every change, as
// the watch cache's does.
type policy struct {
	rv      int64
	objects map[string][]any // by resource
}

func (p *policy) set(resource string, objs ...any) {
	p.rv++
	p.objects[resource] = objs
}

func (p *policy) list(_ context.Context, gvr api.GroupVersionResource, _ string) ([][]byte, int64, error) {
	var out [][]byte
	for _, o := range p.objects[gvr.Resource] {
		b, err := json.Marshal(o)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, b)
	}
	return out, p.rv, nil
}

// TestPolicyChangesTakeEffectAtOnce: the authorizer remembers decoded
// policy and resolved aggregated ClusterRoles, but answers from the current
// policy on the next request after any change.
func TestPolicyChangesTakeEffectAtOnce(t *testing.T) {
	t.Parallel()
	p := &policy{objects: map[string][]any{}}
	az := rbac.NewAuthorizer(p.list)
	alice := &filters.User{Name: "alice", Groups: []string{filters.GroupAuthenticated}}
	allowed := func(verb string) bool {
		d, _, _ := az.Authorize(t.Context(), filters.Attributes{User: alice, Verb: verb, ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "default"})
		return d == filters.DecisionAllow
	}
	part := func(labels map[string]string, verbs ...string) rbacv1.ClusterRole {
		return rbacv1.ClusterRole{ObjectMeta: api.ObjectMeta{Name: "part", Labels: labels},
			Rules: []rbacv1.PolicyRule{{Verbs: verbs, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	}
	agg := rbacv1.ClusterRole{ObjectMeta: api.ObjectMeta{Name: "agg"}, AggregationRule: &rbacv1.AggregationRule{
		ClusterRoleSelectors: []api.LabelSelector{{MatchLabels: map[string]string{"x": "true"}}}}}
	binding := rbacv1.ClusterRoleBinding{ObjectMeta: api.ObjectMeta{Name: "alice-agg"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "agg"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}

	p.set("clusterroles", agg, part(map[string]string{"x": "true"}, "get"))
	p.set("clusterrolebindings", binding)
	for range 3 {
		if !allowed("get") || allowed("list") {
			t.Fatal("want get allowed, list not, through the aggregated role")
		}
	}
	p.set("clusterroles", agg, part(map[string]string{"x": "true"}, "list"))
	if allowed("get") || !allowed("list") {
		t.Fatal("after the aggregated role changed: want list allowed, get not")
	}
	p.set("clusterroles", agg, part(nil, "list"))
	if allowed("list") {
		t.Fatal("a role no longer aggregated still grants")
	}
	p.set("clusterroles", agg, part(map[string]string{"x": "true"}, "list"))
	if !allowed("list") {
		t.Fatal("re-aggregated role does not grant")
	}
	p.set("clusterrolebindings")
	if allowed("list") {
		t.Fatal("a deleted binding still grants")
	}
}
