package rbac_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/builtin/security/rbac"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// TestDefaultRolesOnEphemeralContainers: as in Kubernetes' bootstrap policy,
// none of the aggregated user-facing roles (admin, edit, view) grants
// pods/ephemeralcontainers: adding a container to a running pod bypasses
// admission policies written before that subresource existed, so
// administrators grant it on purpose (a ClusterRole labelled
// aggregate-to-edit), while the same roles keep pods/exec and pods/attach.
func TestDefaultRolesOnEphemeralContainers(t *testing.T) {
	t.Parallel()
	p := &policy{objects: map[string][]any{}}
	var roles []any
	for _, cr := range rbac.ClusterRoles() {
		roles = append(roles, cr)
	}
	p.set("clusterroles", roles...)
	var bindings []any
	for _, role := range []string{"admin", "edit", "view"} {
		bindings = append(bindings, rbacv1.RoleBinding{ObjectMeta: api.ObjectMeta{Namespace: "dev", Name: role + "-user"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: role + "-user"}}})
	}
	p.set("rolebindings", bindings...)
	p.set("clusterrolebindings", rbacv1.ClusterRoleBinding{ObjectMeta: api.ObjectMeta{Name: "root"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "root"}}})
	az := rbac.NewAuthorizer(p.list)

	for _, tc := range []struct {
		user, verb, group, resource, subresource string
		want                                     bool
	}{
		{"cluster-admin-user", "patch", "", "pods", "ephemeralcontainers", false}, // bound to nothing
		{"root", "patch", "", "pods", "ephemeralcontainers", true},
		{"admin-user", "patch", "", "pods", "ephemeralcontainers", false},
		{"admin-user", "update", "", "pods", "ephemeralcontainers", false},
		{"admin-user", "get", "", "pods", "ephemeralcontainers", false},
		{"edit-user", "patch", "", "pods", "ephemeralcontainers", false},
		{"edit-user", "update", "", "pods", "ephemeralcontainers", false},
		{"edit-user", "get", "", "pods", "ephemeralcontainers", false},
		{"view-user", "get", "", "pods", "ephemeralcontainers", false},
		{"view-user", "patch", "", "pods", "ephemeralcontainers", false},
		// What the same roles do grant around it.
		{"edit-user", "patch", "", "pods", "", true},
		{"edit-user", "create", "", "pods", "exec", true},
		{"edit-user", "create", "", "pods", "attach", true},
		{"edit-user", "create", "", "pods", "eviction", true},
		{"admin-user", "create", "", "pods", "exec", true},
		{"admin-user", "create", "rbac.authorization.k8s.io", "rolebindings", "", true},
		{"edit-user", "create", "rbac.authorization.k8s.io", "rolebindings", "", false},
		{"view-user", "get", "", "pods", "", true},
		{"view-user", "get", "", "pods", "log", true},
		{"view-user", "create", "", "pods", "exec", false},
		{"view-user", "list", "events.k8s.io", "events", "", true},
	} {
		name := fmt.Sprintf("%s %s %s/%s", tc.user, tc.verb, tc.resource, tc.subresource)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d, _, err := az.Authorize(t.Context(), filters.Attributes{
				User: &filters.User{Name: tc.user, Groups: []string{filters.GroupAuthenticated}}, Verb: tc.verb,
				ResourceRequest: true, APIGroup: tc.group, APIVersion: "v1", Namespace: "dev",
				Resource: tc.resource, Subresource: tc.subresource, Name: "web-0"})
			if err != nil {
				t.Fatal(err)
			}
			if got := d == filters.DecisionAllow; got != tc.want {
				t.Errorf("allowed = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWaitVisible checks that WaitVisible returns once the lister shows every
// default ClusterRole and ClusterRoleBinding, and names a missing one when ctx
// ends first.
func TestWaitVisible(t *testing.T) {
	all := map[string][][]byte{}
	for _, r := range rbac.ClusterRoles() {
		all["clusterroles"] = append(all["clusterroles"], []byte(`{"metadata":{"name":"`+r.Name+`"}}`))
	}
	for _, b := range rbac.ClusterRoleBindings() {
		all["clusterrolebindings"] = append(all["clusterrolebindings"], []byte(`{"metadata":{"name":"`+b.Name+`"}}`))
	}
	var calls atomic.Int32
	lagging := func(_ context.Context, gvr api.GroupVersionResource, _ string) ([][]byte, int64, error) {
		if calls.Add(1) < 4 { // the watch caches have not caught up yet
			return all[gvr.Resource][:1], 1, nil
		}
		return all[gvr.Resource], 2, nil
	}
	if err := rbac.WaitVisible(t.Context(), lagging); err != nil {
		t.Fatalf("WaitVisible with a lister that catches up: %v", err)
	}
	never := func(_ context.Context, gvr api.GroupVersionResource, _ string) ([][]byte, int64, error) {
		return all[gvr.Resource][:1], 1, nil
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err := rbac.WaitVisible(ctx, never)
	if err == nil || !strings.Contains(err.Error(), "not visible") {
		t.Fatalf("WaitVisible with a lister that never catches up: %v", err)
	}
}
