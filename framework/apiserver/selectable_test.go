package apiserver

import (
	"reflect"
	"testing"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/fields"
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
		if got := selectableFieldsIn(res2)(o); got["host"] != "host1" || got["port"] != "80" || got["metadata.namespace"] != "default" {
			t.Errorf("%s: v2 fields %v", name, got)
		}
		if got := selectableFieldsIn(res1)(o); got["hostPort"] != "host1:80" || got["metadata.namespace"] != "default" {
			t.Errorf("%s: v1 fields %v", name, got)
		}
	}
}

// TestFieldsMatch: cached fields hold no metadata.name (so that objects can
// share them); a requirement on it is checked against the object's name.
func TestFieldsMatch(t *testing.T) {
	fl := map[string]string{"metadata.namespace": "ns", "spec.nodeName": "n1"}
	for _, tc := range []struct {
		sel  string
		want bool
	}{
		{"", true},
		{"metadata.name=a", true},
		{"metadata.name=b", false},
		{"metadata.name!=a", false},
		{"metadata.name!=b", true},
		{"metadata.name=a,spec.nodeName=n1", true},
		{"metadata.name=a,spec.nodeName=n2", false},
		{"spec.nodeName!=n1", false},
		{"spec.nodeName=", false},
		{"status.phase=", true},
		{"metadata.namespace=ns,metadata.name!=", true},
	} {
		sel, err := fields.Parse(tc.sel)
		if err != nil {
			t.Fatal(err)
		}
		if got := fieldsMatch(sel.Requirements(), "a", fl); got != tc.want {
			t.Errorf("%q: got %v, want %v", tc.sel, got, tc.want)
		}
	}
}

// TestFieldSetsShareEqualMaps: objects with equal labels and fields share one
// map of each; different ones keep their own.
func TestFieldSetsShareEqualMaps(t *testing.T) {
	sets := newFieldSets()
	build := func(name string, labels map[string]any, node string) *cachedObject {
		stored, err := encodeStored(map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": "default", "labels": labels},
			"spec":     map[string]any{"nodeName": node}})
		if err != nil {
			t.Fatal(err)
		}
		o, err := buildCachedObject("/registry/core/pods/default/"+name, stored, 5, true,
			func(m map[string]any) map[string]string {
				return map[string]string{"spec.nodeName": api.NestedString(m, "spec", "nodeName")}
			})
		if err != nil {
			t.Fatal(err)
		}
		sets.share(o)
		return o
	}
	a := build("a", map[string]any{"app": "x", "tier": "web"}, "n1")
	b := build("b", map[string]any{"tier": "web", "app": "x"}, "n1")
	c := build("c", map[string]any{"app": "y"}, "n2")
	same := func(m1, m2 map[string]string) bool {
		return reflect.ValueOf(m1).UnsafePointer() == reflect.ValueOf(m2).UnsafePointer()
	}
	if !same(a.labels, b.labels) || !same(a.fields, b.fields) {
		t.Errorf("equal labels and fields are not shared: %v %v, %v %v", a.labels, b.labels, a.fields, b.fields)
	}
	if same(a.labels, c.labels) || same(a.fields, c.fields) || c.labels["app"] != "y" || c.fields["spec.nodeName"] != "n2" {
		t.Errorf("different maps shared: %v %v", c.labels, c.fields)
	}
	if _, ok := a.fields["metadata.name"]; ok || a.fields["metadata.namespace"] != "default" {
		t.Errorf("fields %v: want metadata.namespace and no metadata.name", a.fields)
	}
}
