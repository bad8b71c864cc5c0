package apiserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

func TestBuiltinDefinitionsArePublishedWithTheirReferences(t *testing.T) {
	t.Parallel()
	raw := map[string]json.RawMessage{
		"io.k8s.api.apps.v1.Deployment":                   json.RawMessage(`{"type":"object","properties":{"metadata":{"$ref":"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta","description":"Standard."},"spec":{"$ref":"io.k8s.api.apps.v1.DeploymentSpec"}},"x-kubernetes-group-version-kind":[{"group":"apps","version":"v1","kind":"Deployment"}]}`),
		"io.k8s.api.apps.v1.DeploymentSpec":               json.RawMessage(`{"type":"object","properties":{"maxSurge":{"$ref":"io.k8s.apimachinery.pkg.util.intstr.IntOrString"}}}`),
		"io.k8s.apimachinery.pkg.util.intstr.IntOrString": json.RawMessage(`{"type":"string","format":"int-or-string","oneOf":[{"type":"integer"},{"type":"string"}]}`),
		"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
		"io.k8s.api.core.v1.Pod":                          json.RawMessage(`{"type":"object","x-kubernetes-group-version-kind":[{"group":"","version":"v1","kind":"Pod"}]}`),
	}
	d, err := newBuiltinDefs(raw)
	if err != nil {
		t.Fatal(err)
	}
	apps := api.GroupVersion{Group: "apps", Version: "v1"}
	list := []*registry.Resource{
		{GroupVersion: apps, Resource: "deployments", Kind: "Deployment", Namespaced: true},
		{GroupVersion: apps, Resource: "widgets", Kind: "Widget", Namespaced: true, Schema: map[string]any{"type": "object"}},
	}
	decode := func(v any) map[string]any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	v3 := decode(openAPIDoc("apis/apps/v1", list, "v1.33.0", d))
	v3Schemas := v3["components"].(map[string]any)["schemas"].(map[string]any)
	v2 := decode(openAPIV2JSON(list, "v1.33.0", d))
	v2Defs := v2["definitions"].(map[string]any)
	for _, doc := range []struct {
		name, prefix string
		doc          map[string]any
		defs         map[string]any
	}{{"v3", "#/components/schemas/", v3, v3Schemas}, {"v2", "#/definitions/", v2, v2Defs}} {
		for _, n := range []string{"io.k8s.api.apps.v1.Deployment", "io.k8s.api.apps.v1.DeploymentSpec", "io.k8s.apimachinery.pkg.util.intstr.IntOrString", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "apps.v1.Widget"} {
			if _, ok := doc.defs[n]; !ok {
				t.Errorf("%s lacks %s", doc.name, n)
			}
		}
		if _, ok := doc.defs["io.k8s.api.core.v1.Pod"]; ok {
			t.Errorf("%s has core/v1 Pod in apps/v1's document", doc.name)
		}
		for _, ref := range docRefs(doc.doc) {
			if _, ok := doc.defs[strings.TrimPrefix(ref, doc.prefix)]; !ok || !strings.HasPrefix(ref, doc.prefix) {
				t.Errorf("%s: unresolved %s", doc.name, ref)
			}
		}
	}
	ios := v3Schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"].(map[string]any)
	if _, ok := ios["type"]; ok || ios["oneOf"] == nil {
		t.Errorf("v3 IntOrString = %v, want oneOf without type", ios)
	}
	ios = v2Defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"].(map[string]any)
	if ios["type"] != "string" || ios["oneOf"] != nil {
		t.Errorf("v2 IntOrString = %v, want type string without oneOf", ios)
	}
	meta := v3Schemas["io.k8s.api.apps.v1.Deployment"].(map[string]any)["properties"].(map[string]any)["metadata"].(map[string]any)
	if meta["description"] != "Standard." || meta["allOf"] == nil {
		t.Errorf("v3 metadata = %v, want its description beside allOf", meta)
	}
}

func docRefs(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if r, ok := v["$ref"].(string); ok {
			out = append(out, r)
		}
		for _, c := range v {
			out = append(out, docRefs(c)...)
		}
	case []any:
		for _, c := range v {
			out = append(out, docRefs(c)...)
		}
	}
	return out
}
