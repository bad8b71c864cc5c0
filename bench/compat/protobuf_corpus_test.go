package compat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/yaml"

	crdapi "github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/framework/api"
	pbdecode "github.com/converge-dev/converge/framework/apiserver/protobuf"
	"github.com/converge-dev/converge/internal/shared"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestProtobufCRDCorpus is a differential test of Converge's protobuf decoder
// on real-world CRDs (the shared corpus: Argo Workflows, Prometheus rules,
// Gateway API, ...): each is encoded by Kubernetes' generated code, decoded by
// Converge's schema-driven decoder into crd/api's types, and must equal
// Kubernetes' JSON of the same object.
func TestProtobufCRDCorpus(t *testing.T) {
	files, err := filepath.Glob(shared.Path("conformance", "crds", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no shared CRD corpus (set CONVERGE_SHARED)")
	}
	var d pbdecode.Decoder
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
				t.Fatalf("read as Kubernetes' type: %v", err)
			}
			js, err := json.Marshal(&crd)
			if err != nil {
				t.Fatal(err)
			}
			want, err := api.DecodeMap(js)
			if err != nil {
				t.Fatal(err)
			}
			_, got, err := d.Decode(protobufBody(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", &crd),
				reflect.TypeFor[crdapi.CustomResourceDefinition]())
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if diff := cmp.Diff(want, got, ignoreNulls); diff != "" {
				t.Errorf("decoded CRD differs from Kubernetes' JSON (-want +got):\n%s", diff)
			}
		})
	}
}

// ignoreNulls ignores object members whose value is null: Kubernetes' JSON
// writes nil slices and zero times as null where the decoder may leave them
// out (nulls inside arrays are values and still count).
var ignoreNulls = cmpopts.IgnoreMapEntries(func(_ string, v any) bool { return v == nil })
