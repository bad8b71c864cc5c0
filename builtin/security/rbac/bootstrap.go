package rbac

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// Aggregation labels of the default roles.
const (
	AggregateToAdmin = "rbac.authorization.k8s.io/aggregate-to-admin"
	AggregateToEdit  = "rbac.authorization.k8s.io/aggregate-to-edit"
	AggregateToView  = "rbac.authorization.k8s.io/aggregate-to-view"
)

func rule(verbs []string, groups []string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources}
}

var (
	readVerbs  = []string{"get", "list", "watch"}
	writeVerbs = []string{"create", "delete", "deletecollection", "patch", "update"}
)

func bootstrapMeta(name string, labels map[string]string) api.ObjectMeta {
	l := map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"}
	for k, v := range labels {
		l[k] = v
	}
	return api.ObjectMeta{Name: name, Labels: l, Annotations: map[string]string{"rbac.authorization.kubernetes.io/autoupdate": "true"}}
}

func aggregated(label string) *rbacv1.AggregationRule {
	return &rbacv1.AggregationRule{ClusterRoleSelectors: []api.LabelSelector{{MatchLabels: map[string]string{label: "true"}}}}
}

// ClusterRoles returns the default ClusterRoles: cluster-admin, admin, edit and
// view (aggregated from the system:aggregate-to-* roles by label, as in
// Kubernetes), system:discovery, system:basic-user, system:auth-delegator
// (delegated authentication and authorization: tokenreviews and
// subjectaccessreviews, bound to nobody), system:public-info-viewer,
// system:service-account-issuer-discovery (the OIDC discovery document and
// keys, bound to every ServiceAccount, as Kubernetes),
// system:monitoring (metrics and health checks) and the components' roles
// (system:node, system:kube-scheduler, system:kube-controller-manager,
// system:node-proxier) and system:kubelet-api-admin (the node agents' API,
// nodes/proxy among it, bound to nobody).
func ClusterRoles() []rbacv1.ClusterRole {
	core, apps, batch := []string{""}, []string{"apps"}, []string{"batch"}
	tm := api.TypeMeta{APIVersion: rbacv1.GroupVersion.String(), Kind: "ClusterRole"}
	return append([]rbacv1.ClusterRole{
		{TypeMeta: tm, ObjectMeta: bootstrapMeta("cluster-admin", nil), Rules: []rbacv1.PolicyRule{
			rule([]string{"*"}, []string{"*"}, "*"),
			{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
		}},
		{TypeMeta: tm, ObjectMeta: bootstrapMeta("admin", nil), AggregationRule: aggregated(AggregateToAdmin)},
		{TypeMeta: tm, ObjectMeta: bootstrapMeta("edit", map[string]string{AggregateToAdmin: "true"}), AggregationRule: aggregated(AggregateToEdit)},
		{TypeMeta: tm, ObjectMeta: bootstrapMeta("view", map[string]string{AggregateToEdit: "true"}), AggregationRule: aggregated(AggregateToView)},
		{TypeMeta: tm, ObjectMeta: bootstrapMeta("system:aggregate-to-admin", map[string]string{AggregateToAdmin: "true"}), Rules: []rbacv1.PolicyRule{
			rule(append(append([]string{}, readVerbs...), writeVerbs...), []string{rbacv1.GroupName}, "roles", "rolebindings"),
			rule([]string{"create"}, []string{"authorization.k8s.io"}, "localsubjectaccessreviews"),
		}},
		{TypeMeta: tm, ObjectMeta: bootstrapMeta("system:aggregate-to-edit", map[string]string{AggregateToEdit: "true"}), Rules: []rbacv1.PolicyRule{
			// Not pods/ephemeralcontainers, deliberately, as Kubernetes: a
			// container added to a running pod passes by admission policies
			// written for pod creates, so administrators grant it on purpose.
			rule(writeVerbs, core, "pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "pods/eviction"),
			// read on the escalating subresources, as Kubernetes: WebSocket clients GET them
			rule(readVerbs, core, "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"),
			rule(append(append([]string{}, readVerbs...), writeVerbs...), core, "configmaps", "events", "persistentvolumeclaims", "replicationcontrollers",
				"replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy", "endpoints"),
			rule([]string{"create"}, core, "serviceaccounts/token"),
			rule(writeVerbs, apps, "daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"),
			rule(writeVerbs, []string{"autoscaling"}, "horizontalpodautoscalers"),
			rule(writeVerbs, batch, "cronjobs", "jobs"),
			rule(writeVerbs, []string{"policy"}, "poddisruptionbudgets"),
			rule(writeVerbs, []string{"networking.k8s.io"}, "ingresses", "networkpolicies"),
			rule(append(append([]string{}, readVerbs...), writeVerbs...), []string{"coordination.k8s.io"}, "leases"),
			rule(append(append([]string{}, readVerbs...), writeVerbs...), []string{"discovery.k8s.io"}, "endpointslices"),
		}},
		{TypeMeta: tm, ObjectMeta: bootstrapMeta("system:aggregate-to-view", map[string]string{AggregateToView: "true"}), Rules: []rbacv1.PolicyRule{
			rule(readVerbs, core, "pods", "pods/log", "pods/status", "configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status",
				"replicationcontrollers", "replicationcontrollers/scale", "replicationcontrollers/status", "serviceaccounts", "services", "services/status",
				"bindings", "events", "limitranges", "resourcequotas", "resourcequotas/status", "namespaces", "namespaces/status"),
			rule(readVerbs, apps, "controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
				"replicasets", "replicasets/scale", "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"),
			rule(readVerbs, []string{"autoscaling"}, "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
			rule(readVerbs, batch, "cronjobs", "cronjobs/status", "jobs", "jobs/status"),
			rule(readVerbs, []string{"policy"}, "poddisruptionbudgets", "poddisruptionbudgets/status"),
			rule(readVerbs, []string{"discovery.k8s.io"}, "endpointslices"),
			rule(readVerbs, []string{"events.k8s.io"}, "events"),
		}},
		{TypeMeta: tm, ObjectMeta: bootstrapMeta("system:aggregated-metrics-reader", map[string]string{
			AggregateToView: "true", AggregateToEdit: "true", AggregateToAdmin: "true"}), Rules: []rbacv1.PolicyRule{
			rule([]string{"get", "list", "watch"}, []string{"metrics.k8s.io"}, "pods", "nodes"),
		}},
		{TypeMeta: tm, ObjectMeta: bootstrapMeta("system:discovery", nil), Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"}},
		}},
		{TypeMeta: tm, ObjectMeta: bootstrapMeta("system:basic-user", nil), Rules: []rbacv1.PolicyRule{
			rule([]string{"create"}, []string{"authorization.k8s.io"}, "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
			rule([]string{"create"}, []string{"authentication.k8s.io"}, "selfsubjectreviews"),
		}},
		{TypeMeta: tm, ObjectMeta: bootstrapMeta("system:auth-delegator", nil), Rules: []rbacv1.PolicyRule{
			rule([]string{"create"}, []string{"authentication.k8s.io"}, "tokenreviews"),
			rule([]string{"create"}, []string{"authorization.k8s.io"}, "subjectaccessreviews"),
		}},
		{TypeMeta: tm, ObjectMeta: bootstrapMeta("system:service-account-issuer-discovery", nil), Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/.well-known/openid-configuration", "/.well-known/openid-configuration/", "/openid/v1/jwks", "/openid/v1/jwks/"}},
		}},
		{TypeMeta: tm, ObjectMeta: bootstrapMeta("system:public-info-viewer", nil), Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/livez", "/readyz", "/version", "/version/"}},
		}},
		{TypeMeta: tm, ObjectMeta: bootstrapMeta(MonitoringGroup, nil), Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*", "/healthz/*"}},
		}},
	}, componentRoles(tm)...)
}

// ClusterRoleBindings returns the default bindings: cluster-admin to
// system:masters, system:discovery and system:basic-user to
// system:authenticated, system:public-info-viewer to everyone,
// system:service-account-issuer-discovery to system:serviceaccounts,
// system:monitoring to the group of that name, and each
// component's role to its user.
func ClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	tm := api.TypeMeta{APIVersion: rbacv1.GroupVersion.String(), Kind: "ClusterRoleBinding"}
	bind := func(name string, groups ...string) rbacv1.ClusterRoleBinding {
		b := rbacv1.ClusterRoleBinding{TypeMeta: tm, ObjectMeta: bootstrapMeta(name, nil),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}
		for _, g := range groups {
			b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
		}
		return b
	}
	return append([]rbacv1.ClusterRoleBinding{
		bind("cluster-admin", filters.GroupMasters),
		bind("system:discovery", filters.GroupAuthenticated),
		bind("system:basic-user", filters.GroupAuthenticated),
		bind("system:public-info-viewer", filters.GroupAuthenticated, filters.GroupUnauthenticated),
		bind("system:service-account-issuer-discovery", filters.GroupServiceAccounts),
		bind(MonitoringGroup, MonitoringGroup),
	}, componentBindings(tm)...)
}

// MonitoringGroup names the ClusterRole that reads /metrics and the health
// checks and the group it is bound to (Kubernetes' system:monitoring).
const MonitoringGroup = "system:monitoring"

// BootstrapUser is the identity Bootstrap writes as.
var BootstrapUser = &filters.User{Name: "system:apiserver", Groups: []string{filters.GroupMasters}}

// Bootstrap creates the default ClusterRoles and ClusterRoleBindings that do not
// exist yet through h (the API server's handler), as BootstrapUser. Existing
// objects are left alone.
func Bootstrap(ctx context.Context, h http.Handler) error {
	ctx = filters.WithUser(ctx, BootstrapUser)
	post := func(path string, obj any, name string) error {
		b, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated && rec.Code != http.StatusConflict {
			return fmt.Errorf("create %s: %d %s", name, rec.Code, rec.Body.String())
		}
		return nil
	}
	for _, r := range ClusterRoles() {
		if err := post("/apis/rbac.authorization.k8s.io/v1/clusterroles", r, "clusterrole "+r.Name); err != nil {
			return err
		}
	}
	for _, b := range ClusterRoleBindings() {
		if err := post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", b, "clusterrolebinding "+b.Name); err != nil {
			return err
		}
	}
	return nil
}

// WaitVisible blocks until every default ClusterRole and ClusterRoleBinding
// that Bootstrap creates can be read through list (the authorizer's view, fed
// by the API server's watch caches, which follow the store a moment later),
// or ctx ends. Kubernetes' API server is not ready before its bootstrap roles
// are in place (the rbac/bootstrap-roles post-start hook); without the wait,
// a component starting right after the bootstrap is denied by a policy its
// authorizer cannot see yet ("clusterrole system:basic-user not found").
func WaitVisible(ctx context.Context, list Lister) error {
	want := map[api.GroupVersionResource][]string{}
	for _, r := range ClusterRoles() {
		want[clusterRolesGVR] = append(want[clusterRolesGVR], r.Name)
	}
	for _, b := range ClusterRoleBindings() {
		want[clusterRoleBindingsGVR] = append(want[clusterRoleBindingsGVR], b.Name)
	}
	for gvr, names := range want {
		for {
			missing, err := missingNames(ctx, list, gvr, names)
			if err != nil {
				return err
			}
			if missing == "" {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("wait for the default %s: %s not visible: %w", gvr.Resource, missing, ctx.Err())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return nil
}

// missingNames returns the first of names that list does not return for gvr
// ("" when all are there).
func missingNames(ctx context.Context, list Lister, gvr api.GroupVersionResource, names []string) (string, error) {
	raw, _, err := list(ctx, gvr, "")
	if err != nil {
		return "", fmt.Errorf("list %s: %w", gvr.Resource, err)
	}
	have := make(map[string]bool, len(raw))
	for _, b := range raw {
		var m struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return "", fmt.Errorf("decode %s: %w", gvr.Resource, err)
		}
		have[m.Metadata.Name] = true
	}
	for _, n := range names {
		if !have[n] {
			return n, nil
		}
	}
	return "", nil
}
