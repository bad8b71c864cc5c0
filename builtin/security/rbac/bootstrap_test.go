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
	az := defaultPolicy(map[string]string{"root": "cluster-admin"}, "admin", "edit", "view")
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
		checkAllowed(t, az, tc.user, tc.verb, tc.group, tc.resource, tc.subresource, tc.want)
	}
}

// TestDefaultRolesOnProxySubresources: as in Kubernetes, pods/proxy and
// services/proxy are subresources with their own rules: edit and admin grant
// them, view (which reads pods and services) does not, and nodes/proxy is
// granted by system:kubelet-api-admin (bound to nobody by default), not by
// the namespaced roles.
func TestDefaultRolesOnProxySubresources(t *testing.T) {
	t.Parallel()
	az := defaultPolicy(map[string]string{"kubelet-admin": "system:kubelet-api-admin"}, "admin", "edit", "view")
	for _, tc := range []struct {
		user, verb, resource, subresource string
		want                              bool
	}{
		{"edit-user", "get", "services", "proxy", true},
		{"edit-user", "create", "services", "proxy", true},
		{"admin-user", "delete", "services", "proxy", true},
		{"edit-user", "patch", "pods", "proxy", true},
		{"view-user", "get", "services", "", true},
		{"view-user", "get", "services", "proxy", false},
		{"view-user", "get", "pods", "proxy", false},
		{"admin-user", "get", "nodes", "proxy", false},
		{"kubelet-admin", "get", "nodes", "proxy", true},
		{"kubelet-admin", "create", "nodes", "proxy", true},
		{"kubelet-admin", "get", "nodes", "metrics", true},
		{"kubelet-admin", "get", "services", "proxy", false},
	} {
		checkAllowed(t, az, tc.user, tc.verb, "", tc.resource, tc.subresource, tc.want)
	}
}

// TestDefaultRolesOnIssuerDiscovery: as in Kubernetes, every ServiceAccount
// may read the OIDC discovery document and keys
// (system:service-account-issuer-discovery), and other paths stay closed.
func TestDefaultRolesOnIssuerDiscovery(t *testing.T) {
	t.Parallel()
	p := &policy{objects: map[string][]any{}}
	var roles, bindings []any
	for _, r := range rbac.ClusterRoles() {
		roles = append(roles, r)
	}
	for _, b := range rbac.ClusterRoleBindings() {
		bindings = append(bindings, b)
	}
	p.set("clusterroles", roles...)
	p.set("clusterrolebindings", bindings...)
	az := rbac.NewAuthorizer(p.list)
	sa := &filters.User{Name: "system:serviceaccount:ns:default", Groups: []string{filters.GroupServiceAccounts, filters.GroupServiceAccounts + ":ns", filters.GroupAuthenticated}}
	for path, want := range map[string]bool{
		"/.well-known/openid-configuration": true, "/openid/v1/jwks": true, "/openid/v1/jwks/": true, "/logs/": false, "/debug/pprof/": false,
	} {
		d, _, err := az.Authorize(t.Context(), filters.Attributes{User: sa, Verb: "get", Path: path})
		if err != nil {
			t.Fatal(err)
		}
		if got := d == filters.DecisionAllow; got != want {
			t.Errorf("GET %s by a ServiceAccount: allowed = %v, want %v", path, got, want)
		}
	}
}

// defaultPolicy is an authorizer of the default ClusterRoles with
// clusterBound (user: role) bound cluster-wide and each role of nsBound to
// ROLE-user in namespace dev.
func defaultPolicy(clusterBound map[string]string, nsBound ...string) *rbac.Authorizer {
	p := &policy{objects: map[string][]any{}}
	var roles []any
	for _, cr := range rbac.ClusterRoles() {
		roles = append(roles, cr)
	}
	p.set("clusterroles", roles...)
	var bindings []any
	for _, role := range nsBound {
		bindings = append(bindings, rbacv1.RoleBinding{ObjectMeta: api.ObjectMeta{Namespace: "dev", Name: role + "-user"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: role + "-user"}}})
	}
	p.set("rolebindings", bindings...)
	var cluster []any
	for user, role := range clusterBound {
		cluster = append(cluster, rbacv1.ClusterRoleBinding{ObjectMeta: api.ObjectMeta{Name: user},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}})
	}
	p.set("clusterrolebindings", cluster...)
	return rbac.NewAuthorizer(p.list)
}

// checkAllowed runs a subtest asking az whether user may verb
// group/resource/subresource of web-0 in namespace dev (cluster-scoped for
// nodes).
func checkAllowed(t *testing.T, az *rbac.Authorizer, user, verb, group, resource, subresource string, want bool) {
	t.Helper()
	ns := "dev"
	if resource == "nodes" {
		ns = ""
	}
	t.Run(fmt.Sprintf("%s %s %s/%s", user, verb, resource, subresource), func(t *testing.T) {
		t.Parallel()
		d, _, err := az.Authorize(t.Context(), filters.Attributes{
			User: &filters.User{Name: user, Groups: []string{filters.GroupAuthenticated}}, Verb: verb,
			ResourceRequest: true, APIGroup: group, APIVersion: "v1", Namespace: ns,
			Resource: resource, Subresource: subresource, Name: "web-0"})
		if err != nil {
			t.Fatal(err)
		}
		if got := d == filters.DecisionAllow; got != want {
			t.Errorf("allowed = %v, want %v", got, want)
		}
	})
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
