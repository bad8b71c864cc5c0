package apiserver

import (
	"testing"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/fields"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// TestStorageResourcePrefix: a resource served in another group over another
// resource's storage (registry.Resource.StorageResource) reads and writes that
// resource's keys; the others keep their own group's.
func TestStorageResourcePrefix(t *testing.T) {
	t.Parallel()
	core := api.GroupVersionResource{Version: "v1", Resource: "events"}
	for _, tc := range []struct {
		name string
		res  *registry.Resource
		key  string
		sgv  string
	}{
		{"core", &registry.Resource{GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "events", Namespaced: true},
			"/registry/core/events/ns/e", "v1"},
		{"alias", &registry.Resource{GroupVersion: api.GroupVersion{Group: "events.k8s.io", Version: "v1"}, Resource: "events",
			Namespaced: true, StorageResource: &core, StorageVersion: "ignored"},
			"/registry/core/events/ns/e", "v1"},
		{"versions of one group", &registry.Resource{GroupVersion: api.GroupVersion{Group: "autoscaling", Version: "v1"},
			Resource: "horizontalpodautoscalers", Namespaced: true, StorageVersion: "v2",
			Convert: func(m map[string]any, _ api.GroupVersion) (map[string]any, error) { return m, nil }},
			"/registry/autoscaling/horizontalpodautoscalers/ns/e", "autoscaling/v2"},
		{"cluster-scoped", &registry.Resource{GroupVersion: api.GroupVersion{Group: "example.com", Version: "v1"}, Resource: "gizmos"},
			"/registry/example.com/gizmos/e", "example.com/v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := storageKey(tc.res, "ns", "e"); got != tc.key {
				t.Errorf("key %q, want %q", got, tc.key)
			}
			if got := tc.res.StorageGroupVersion().String(); got != tc.sgv {
				t.Errorf("storage version %q, want %q", got, tc.sgv)
			}
		})
	}
}

func TestStorageFieldSelector(t *testing.T) {
	t.Parallel()
	labels := map[string]string{"regarding.name": "involvedObject.name", "reportingController": "reportingComponent"}
	for _, tc := range []struct{ in, want string }{
		{"regarding.name=web-0", "involvedObject.name=web-0"},
		{"regarding.name!=a,reason=Pulled,reportingController=kubelet", "involvedObject.name!=a,reason=Pulled,reportingComponent=kubelet"},
		{"metadata.name=x", "metadata.name=x"},
		{"", ""},
	} {
		sel, err := fields.Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := storageFieldSelector(sel, labels).String(); got != tc.want {
			t.Errorf("%q → %q, want %q", tc.in, got, tc.want)
		}
	}
}
