package api_test

import (
	"os"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	crdapi "github.com/converge-dev/converge/crd/api"
	fapi "github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/protobuf"
)

// TestDecodeProtobuf decodes CRDs encoded by Kubernetes' generated code
// (testdata/NAME.pb, written by bench/compat's TestProtobufFixtures) and
// compares the result with Kubernetes' JSON of the same object
// (testdata/NAME.json).
func TestDecodeProtobuf(t *testing.T) {
	t.Parallel()
	var d protobuf.Decoder
	for _, name := range []string{"crd", "crd-webhook"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pb, err := os.ReadFile("testdata/" + name + ".pb")
			if err != nil {
				t.Fatal(err)
			}
			js, err := os.ReadFile("testdata/" + name + ".json")
			if err != nil {
				t.Fatal(err)
			}
			tm, got, err := d.Decode(pb, reflect.TypeFor[crdapi.CustomResourceDefinition]())
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if tm.APIVersion != "apiextensions.k8s.io/v1" || tm.Kind != "CustomResourceDefinition" {
				t.Errorf("type meta %+v", tm)
			}
			want, err := fapi.DecodeMap(js)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, ignoreNulls); diff != "" {
				t.Errorf("decoded CRD differs from Kubernetes' JSON (-want +got):\n%s", diff)
			}
			// The decoded map is a valid CRD for the Go types too.
			c, err := crdapi.FromMap(got)
			if err != nil {
				t.Fatalf("FromMap: %v", err)
			}
			if c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["size"].Default == nil {
				t.Error("spec.size lost its default")
			}
		})
	}
}

// FuzzDecodeProtobuf checks that no body, however malformed, makes the
// decoder panic on the recursive CRD types, and that whatever decodes is a
// CRD the Go types read back.
func FuzzDecodeProtobuf(f *testing.F) {
	for _, name := range []string{"crd", "crd-webhook"} {
		pb, err := os.ReadFile("testdata/" + name + ".pb")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(pb)
	}
	var d protobuf.Decoder
	typ := reflect.TypeFor[crdapi.CustomResourceDefinition]()
	f.Fuzz(func(t *testing.T, body []byte) {
		_, obj, err := d.Decode(body, typ)
		if err != nil {
			return
		}
		if _, err := crdapi.FromMap(obj); err != nil {
			t.Fatalf("decoded a CRD the Go types cannot read: %v", err)
		}
	})
}

// ignoreNulls ignores object members whose value is null: Kubernetes' JSON
// writes nil slices and zero times as null where the decoder may leave them
// out (nulls inside arrays are values and still count).
var ignoreNulls = cmpopts.IgnoreMapEntries(func(_ string, v any) bool { return v == nil })
