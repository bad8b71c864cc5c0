package apiserver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMergeRemote(t *testing.T) {
	t.Parallel()
	local := []apiGroup{{Name: "apps"}, {Name: "policy"}, {Name: "example.com"}}
	remote := []RemoteVersion{
		{Group: "wardle.example.com", Version: "v1alpha1", GroupPriority: 2000, VersionPriority: 200},
		{Group: "wardle.example.com", Version: "v1beta1", GroupPriority: 2000, VersionPriority: 300},
		{Group: "metrics.example.org", Version: "v1", GroupPriority: 100, VersionPriority: 10},
		{Group: "apps", Version: "v9", GroupPriority: 99999}, // served here: the registry's versions win
		{Group: "top.example.com", Version: "v1", GroupPriority: 30000, VersionPriority: 1},
	}
	s := &Server{opts: Options{RemoteVersions: func() []RemoteVersion { return remote }}}
	got, byGV := s.mergeRemote(local)
	var names []string
	for _, g := range got {
		names = append(names, g.Name+"@"+g.PreferredVersion.Version)
	}
	want := []string{"top.example.com@v1", "apps@", "policy@", "wardle.example.com@v1beta1", "example.com@", "metrics.example.org@v1"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if len(byGV) != 4 {
		t.Errorf("remote versions: %d, want 4 (not apps/v9)", len(byGV))
	}
}

func TestRemoteDiscoveryVersion(t *testing.T) {
	t.Parallel()
	rv := &RemoteVersion{Group: "wardle.example.com", Version: "v1alpha1", ResourceList: []byte(`{"kind":"APIResourceList",
		"resources":[{"name":"flunders","singularName":"flunder","namespaced":true,"kind":"Flunder","verbs":["get","list"]},
		{"name":"flunders/status","namespaced":true,"kind":"Flunder","verbs":["get","patch"]},
		{"name":"fischers","singularName":"fischer","namespaced":false,"kind":"Fischer","verbs":["get"]}]}`)}
	got := remoteDiscoveryVersion(rv)
	want := discoveryVersion{Version: "v1alpha1", Freshness: "Current", Resources: []discoveryResource{
		{Resource: "fischers", Scope: "Cluster", SingularResource: "fischer", Verbs: []string{"get"},
			ResponseKind: discoveryGVK{Group: "wardle.example.com", Version: "v1alpha1", Kind: "Fischer"}},
		{Resource: "flunders", Scope: "Namespaced", SingularResource: "flunder", Verbs: []string{"get", "list"},
			ResponseKind: discoveryGVK{Group: "wardle.example.com", Version: "v1alpha1", Kind: "Flunder"},
			Subresources: []discoverySubresource{{Subresource: "status", Verbs: []string{"get", "patch"},
				ResponseKind: discoveryGVK{Group: "wardle.example.com", Version: "v1alpha1", Kind: "Flunder"}}}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("discovery (-want +got):\n%s", diff)
	}
	if stale := remoteDiscoveryVersion(&RemoteVersion{Version: "v1"}); stale.Freshness != "Stale" || len(stale.Resources) != 0 {
		t.Errorf("without a resource list: %+v, want Stale and no resources", stale)
	}
}
