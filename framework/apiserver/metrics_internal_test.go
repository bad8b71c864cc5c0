package apiserver

import (
	"net/http/httptest"
	"testing"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/apiserver/registry"
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
	reg := registry.New()
	for _, r := range []*registry.Resource{
		{GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "pods", Namespaced: true},
		{GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "configmaps", Namespaced: true},
		{GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "namespaces"},
		{GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "nodes", StatusSubresource: true},
		{GroupVersion: api.GroupVersion{Group: "apps", Version: "v1"}, Resource: "deployments", Namespaced: true},
	} {
		reg.Add(r)
	}
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
		{"BREW", "/coffee", requestLabels{verb: "other"}},
		{"GET", "/api/v1/namespaces/ns/random-1234", requestLabels{verb: "LIST"}},
		{"GET", "/api/v1/nodes/n1/random-1234", requestLabels{verb: "GET", version: "v1", resource: "nodes", subresource: "unknown", scope: "resource"}},
		{"POST", "/api/v1/namespaces/ns/configmaps?dryRun=Some", requestLabels{verb: "POST", version: "v1", resource: "configmaps", scope: "namespace"}},
	} {
		r := httptest.NewRequest(tc.method, tc.target, nil)
		if got := requestLabelsOf(r, filters.NewRequestInfo(r), reg); got != tc.want {
			t.Errorf("%s %s: %+v, want %+v", tc.method, tc.target, got, tc.want)
		}
	}
}
