package apiserver

import (
	"testing"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// TestSelectableFieldsIn: a resource whose versions select different fields
// (v1 hostPort, v2 host and port, stored as v2) answers a field selector in
// each version on the object converted to it, whichever version's paths the
// watch cache computed (the versions of a CRD register one by one).
func TestSelectableFieldsIn(t *testing.T) {
	v1 := api.GroupVersion{Group: "example.com", Version: "v1"}
	v2 := api.GroupVersion{Group: "example.com", Version: "v2"}
	convert := func(obj map[string]any, to api.GroupVersion) (map[string]any, error) {
		out := api.DeepCopyJSON(obj)
		out["apiVersion"] = to.String()
		if to == v1 {
			out["hostPort"] = api.NestedString(obj, "host") + ":" + api.NestedString(obj, "port")
			delete(out, "host")
			delete(out, "port")
		}
		return out, nil
	}
	fieldsBy := func(keys ...string) func(map[string]any) map[string]string {
		return func(m map[string]any) map[string]string {
			out := map[string]string{}
			for _, k := range keys {
				out[k] = api.NestedString(m, k)
			}
			return out
		}
	}
	res1 := &registry.Resource{GroupVersion: v1, Resource: "widgets", Kind: "Widget", Namespaced: true, StorageVersion: "v2",
		Convert: convert, SelectableFields: fieldsBy("hostPort")}
	res2 := &registry.Resource{GroupVersion: v2, Resource: "widgets", Kind: "Widget", Namespaced: true, StorageVersion: "v2",
		Convert: convert, SelectableFields: fieldsBy("host", "port")}
	stored, err := encodeStored(map[string]any{"apiVersion": "example.com/v2", "kind": "Widget",
		"metadata": map[string]any{"name": "a", "namespace": "default"}, "host": "host1", "port": "80"})
	if err != nil {
		t.Fatal(err)
	}
	for name, cacheFields := range map[string]func(map[string]any) map[string]string{
		"cache with the storage version's paths": res2.SelectableFields, "cache with v1's paths": res1.SelectableFields} {
		o, err := buildCachedObject("/registry/example.com/widgets/default/a", stored, 5, true, cacheFields)
		if err != nil {
			t.Fatal(err)
		}
		if got := selectableFieldsIn(res2)(o); got["host"] != "host1" || got["port"] != "80" || got["metadata.name"] != "a" {
			t.Errorf("%s: v2 fields %v", name, got)
		}
		if got := selectableFieldsIn(res1)(o); got["hostPort"] != "host1:80" || got["metadata.namespace"] != "default" {
			t.Errorf("%s: v1 fields %v", name, got)
		}
	}
}
