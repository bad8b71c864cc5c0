package v1_test

import (
	"os"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	authorizationv1 "github.com/converge-dev/converge/builtin/api/authorization/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/protobuf"
)

// TestDecodeProtobuf decodes a SubjectAccessReview as Kubernetes' generated
// code encodes it (testdata/subjectaccessreview.pb, written by bench/compat's
// TestProtobufFixtures): its extra is a map<string, ExtraValue>, each value a
// wrapper message, and must read as Kubernetes' JSON has it.
func TestDecodeProtobuf(t *testing.T) {
	t.Parallel()
	pb, err := os.ReadFile("testdata/subjectaccessreview.pb")
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile("testdata/subjectaccessreview.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := api.DecodeMap(js)
	if err != nil {
		t.Fatal(err)
	}
	var d protobuf.Decoder
	tm, got, err := d.Decode(pb, reflect.TypeFor[authorizationv1.SubjectAccessReview]())
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if tm.Kind != "SubjectAccessReview" {
		t.Errorf("kind %q", tm.Kind)
	}
	for _, k := range []string{"apiVersion", "kind", "spec", "status"} {
		if diff := cmp.Diff(want[k], got[k]); diff != "" {
			t.Errorf("%s differs from Kubernetes' JSON (-want +got):\n%s", k, diff)
		}
	}
}
