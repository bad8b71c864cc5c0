package apiserver

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// pbFields splits one protobuf message into its length-delimited fields.
func pbFields(t *testing.T, b []byte) map[int][][]byte {
	t.Helper()
	out := map[int][][]byte{}
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 || tag&7 != 2 {
			t.Fatalf("unexpected tag %d (wire type %d)", tag>>3, tag&7)
		}
		b = b[n:]
		l, n := binary.Uvarint(b)
		if n <= 0 || int(l) > len(b)-n {
			t.Fatalf("bad length for field %d", tag>>3)
		}
		out[int(tag>>3)] = append(out[int(tag>>3)], b[n:n+int(l)])
		b = b[n+int(l):]
	}
	return out
}

func one(t *testing.T, b []byte, path ...int) []byte {
	t.Helper()
	for _, f := range path {
		vs := pbFields(t, b)[f]
		if len(vs) != 1 {
			t.Fatalf("field %d: %d values, want 1", f, len(vs))
		}
		b = vs[0]
	}
	return b
}

func TestOpenAPIV2ProtoAnnouncesFieldValidation(t *testing.T) {
	t.Parallel()
	list := []*registry.Resource{
		{GroupVersion: api.GroupVersion{Group: "apps", Version: "v1"}, Resource: "deployments", Kind: "Deployment", Namespaced: true},
		{GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "namespaces", Kind: "Namespace"},
	}
	doc := openAPIV2Proto(list, "v1.32.0")
	if got := string(one(t, doc, 1)); got != "2.0" {
		t.Errorf("swagger = %q", got)
	}
	type item struct{ Path, GVK, Param string }
	var got []item
	for _, named := range pbFields(t, one(t, doc, 8))[2] { // Document.paths → Paths.path
		path := string(one(t, named, 1))
		patch := one(t, named, 2, 8) // NamedPathItem.value → PathItem.patch
		ext := pbFields(t, patch)[13][0]
		if name := string(one(t, ext, 1)); name != "x-kubernetes-group-version-kind" {
			t.Errorf("%s: extension %q", path, name)
		}
		gvk := string(one(t, ext, 2, 2))   // NamedAny.value → Any.yaml
		query := one(t, patch, 8, 1, 2, 3) // parameters → parameter → non_body → query
		got = append(got, item{path, strings.TrimSpace(gvk), string(one(t, query, 4)) + " in " + string(one(t, query, 2))})
	}
	want := []item{
		{"/api/v1/namespaces/{name}", "group: \"\"\nkind: \"Namespace\"\nversion: \"v1\"", "fieldValidation in query"},
		{"/apis/apps/v1/namespaces/{namespace}/deployments/{name}", "group: \"apps\"\nkind: \"Deployment\"\nversion: \"v1\"", "fieldValidation in query"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("paths (-want +got):\n%s", d)
	}
}
