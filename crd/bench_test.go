package crd_test

import (
	"github.com/converge-dev/converge/internal/shared"
	"os"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/crd"
	crdapi "github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/framework/api"
)

// BenchmarkCompileEtcdSchema measures compiling the largest corpus CRD (etcd-druid
// Etcd, 142 KB): JSON-schema conversion and compilation plus CEL compilation.
func BenchmarkCompileEtcdSchema(b *testing.B) {
	data, err := os.ReadFile(shared.Path("conformance/crds/druid.gardener.cloud_etcds.yaml"))
	if err != nil {
		b.Skip("corpus not available:", err)
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		b.Fatal(err)
	}
	m, err := api.DecodeMap(j)
	if err != nil {
		b.Fatal(err)
	}
	c, err := crdapi.FromMap(m)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := crd.NewCustomStrategy(&c.Spec.Versions[0]); err != nil {
			b.Fatal(err)
		}
	}
}
