package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

func TestAggregatedVersion(t *testing.T) {
	t.Parallel()
	const v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	const v2beta1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
	for _, tc := range []struct{ accept, want string }{
		{"", ""},
		{"application/json", ""},
		{"*/*", ""},
		{v2, "v2"},
		{v2beta1, "v2beta1"},
		// kubectl 1.26+ and client-go.
		{v2 + "," + v2beta1 + ",application/json", "v2"},
		{v2beta1 + ", application/json", "v2beta1"},
		// Plain JSON first wins; protobuf discovery is not served and is skipped.
		{"application/json, " + v2, ""},
		{"application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," + v2, "v2"},
		{"application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json", ""},
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscovery", ""},
		{"garbage;;;", ""},
	} {
		if got := aggregatedVersion(tc.accept); got != tc.want {
			t.Errorf("aggregatedVersion(%q) = %q, want %q", tc.accept, got, tc.want)
		}
	}
}

// TestAggregatedDiscoveryMatchesLegacy: the aggregated documents list the same
// groups, versions (preferred first), resources, verbs and subresources as the
// legacy ones, with the apidiscovery content type the client asked for.
func TestAggregatedDiscoveryMatchesLegacy(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	for _, r := range []*registry.Resource{
		{GroupVersion: api.GroupVersion{Group: "example.com", Version: "v1"}, Resource: "widgets", Kind: "Widget",
			ListKind: "WidgetList", Singular: "widget", Namespaced: true, StatusSubresource: true, ShortNames: []string{"wd"},
			Categories: []string{"all"}},
		{GroupVersion: api.GroupVersion{Group: "example.com", Version: "v1beta1"}, Resource: "widgets", Kind: "Widget",
			ListKind: "WidgetList", Singular: "widget", Namespaced: true},
		{GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "things", Kind: "Thing", ListKind: "ThingList"},
	} {
		reg.Add(r)
	}
	srv, err := New(Options{Storage: newMemStore(), Registry: reg, Logger: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start(t.Context())
	get := func(path, accept string) (string, map[string]any) {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, nil)
		req.Header.Set("Accept", accept)
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		out := map[string]any{}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return rec.Header().Get("Content-Type"), out
	}

	ct, doc := get("/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json")
	if ct != "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" || doc["kind"] != "APIGroupDiscoveryList" || doc["apiVersion"] != "apidiscovery.k8s.io/v2" {
		t.Fatalf("/apis: content type %q, kind %v, apiVersion %v", ct, doc["kind"], doc["apiVersion"])
	}
	var agg struct {
		Items []discoveryGroup `json:"items"`
	}
	b, _ := json.Marshal(doc)
	if err := json.Unmarshal(b, &agg); err != nil {
		t.Fatal(err)
	}
	if len(agg.Items) != 1 || agg.Items[0].Metadata["name"] != "example.com" {
		t.Fatalf("/apis groups: %+v", agg.Items)
	}
	vs := agg.Items[0].Versions
	if len(vs) != 2 || vs[0].Version != "v1" || vs[1].Version != "v1beta1" {
		t.Fatalf("versions %+v, want v1 (preferred) then v1beta1", vs)
	}
	_, legacy := get("/apis/example.com/v1", "application/json")
	var want []string
	for _, r := range legacy["resources"].([]any) {
		m := r.(map[string]any)
		want = append(want, m["name"].(string))
	}
	w := vs[0].Resources[0]
	got := []string{w.Resource}
	for _, s := range w.Subresources {
		got = append(got, w.Resource+"/"+s.Subresource)
	}
	if !slices.Equal(got, want) {
		t.Errorf("aggregated resources %v, legacy %v", got, want)
	}
	if w.Scope != "Namespaced" || w.SingularResource != "widget" || w.ResponseKind != (discoveryGVK{"example.com", "v1", "Widget"}) ||
		!slices.Equal(w.ShortNames, []string{"wd"}) || !slices.Contains(w.Verbs, "watch") || vs[0].Freshness != "Current" {
		t.Errorf("widgets entry %+v", w)
	}

	ct, doc = get("/api", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList")
	if ct != "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList" || doc["apiVersion"] != "apidiscovery.k8s.io/v2beta1" {
		t.Fatalf("/api: content type %q, apiVersion %v", ct, doc["apiVersion"])
	}
	items := doc["items"].([]any)
	core := items[0].(map[string]any)["versions"].([]any)[0].(map[string]any)
	if len(items) != 1 || core["version"] != "v1" || core["resources"].([]any)[0].(map[string]any)["scope"] != "Cluster" {
		t.Errorf("/api aggregated: %v", doc)
	}

	if _, doc := get("/apis", "application/json"); doc["kind"] != "APIGroupList" {
		t.Errorf("plain JSON /apis: kind %v, want APIGroupList", doc["kind"])
	}
	if _, doc := get("/api", ""); doc["kind"] != "APIVersions" {
		t.Errorf("plain /api: kind %v, want APIVersions", doc["kind"])
	}
}
