package apiserver

import (
	"net/http/httptest"
	"testing"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

func TestStorageTypeLabel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ key, prefix, typ string }{
		{"/registry/core/pods/default/p", "/registry/core/pods/", "pods"},
		{"/registry/apps/deployments/", "/registry/apps/deployments/", "deployments.apps"},
		{"/registry/core/namespaces/default", "/registry/core/namespaces/", "namespaces"},
		{"/registry/rbac.authorization.k8s.io/clusterroles/admin", "/registry/rbac.authorization.k8s.io/clusterroles/", "clusterroles.rbac.authorization.k8s.io"},
		{"/elsewhere/x", "/elsewhere/x", "/elsewhere/x"},
	} {
		if got := keyPrefix(tc.key); got != tc.prefix {
			t.Errorf("keyPrefix(%q) = %q, want %q", tc.key, got, tc.prefix)
		}
		if got := groupResourceOfPrefix(tc.prefix); got != tc.typ {
			t.Errorf("groupResourceOfPrefix(%q) = %q, want %q", tc.prefix, got, tc.typ)
		}
	}
}

func TestRequestLabels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method, target string
		want           requestLabels
	}{
		{"GET", "/api/v1/namespaces/default/pods", requestLabels{verb: "LIST", version: "v1", resource: "pods", scope: "namespace"}},
		{"GET", "/api/v1/pods?watch=true", requestLabels{verb: "WATCH", version: "v1", resource: "pods", scope: "cluster"}},
		{"POST", "/apis/apps/v1/namespaces/ns/deployments?dryRun=All", requestLabels{verb: "POST", dryRun: "All", group: "apps", version: "v1", resource: "deployments", scope: "namespace"}},
		{"PUT", "/api/v1/nodes/n1/status", requestLabels{verb: "PUT", version: "v1", resource: "nodes", subresource: "status", scope: "resource"}},
		{"DELETE", "/api/v1/namespaces/ns", requestLabels{verb: "DELETE", version: "v1", resource: "namespaces", scope: "namespace"}},
		{"DELETE", "/api/v1/namespaces/ns/configmaps", requestLabels{verb: "DELETECOLLECTION", version: "v1", resource: "configmaps", scope: "namespace"}},
		{"GET", "/metrics", requestLabels{verb: "GET"}},
	} {
		r := httptest.NewRequest(tc.method, tc.target, nil)
		if got := requestLabelsOf(r, filters.NewRequestInfo(r)); got != tc.want {
			t.Errorf("%s %s: %+v, want %+v", tc.method, tc.target, got, tc.want)
		}
	}
}
