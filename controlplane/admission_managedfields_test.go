package controlplane

import (
	"testing"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

// TestDefaultAdmissionIgnoresManagedFields: no plugin of the default
// (secure) admission chain reads or changes managedFields on creates of
// ConfigMaps or pods while no webhook or admission policy is configured, so
// the API server builds a create's managedFields entry as the bytes it
// stores only (admission.ManagedFieldsScoper). BenchmarkManagedFieldsEtcdAdmission
// in framework/apiserver stands in for this chain.
func TestDefaultAdmissionIgnoresManagedFields(t *testing.T) {
	t.Parallel()
	cp, err := Start(t.Context(), Options{DataDir: t.TempDir(), Secure: true, NoFsync: true, CompactionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Close() })
	chain := cp.security.APIServer().Admission
	if chain.Empty() {
		t.Fatal("the secure control plane has no admission chain")
	}
	for _, res := range []string{"configmaps", "pods"} {
		a := &admission.Attributes{Operation: admission.Create, Resource: api.GroupVersionResource{Version: "v1", Resource: res},
			Namespace: "default", Name: "x", Namespaced: true, Object: map[string]any{"metadata": map[string]any{"name": "x"}}}
		if chain.MayReadManagedFields(t.Context(), a) {
			t.Errorf("a plugin of the default chain may read the managedFields of a create of %s", res)
		}
	}
}
