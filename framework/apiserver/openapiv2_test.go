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
	doc := openAPIV2Proto(openAPIV2Items(list, nil), "v1.32.0", nil)
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

func TestKindSchemaV2(t *testing.T) {
	t.Parallel()
	gvk := []any{map[string]any{"group": "example.com", "version": "v1", "kind": "Foo"}}
	meta := map[string]any{
		"apiVersion": map[string]any{"type": "string", "description": descAPIVersion},
		"kind":       map[string]any{"type": "string", "description": descKind},
		"metadata":   map[string]any{"$ref": "#/definitions/" + objectMetaRef, "description": descMetadata},
	}
	withMeta := func(props map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range props {
			out[k] = v
		}
		for k, v := range meta {
			out[k] = v
		}
		return out
	}
	for name, tc := range map[string]struct {
		in, want string
	}{
		"plain schema kept, meta and gvk added": {
			in:   `{"type":"object","description":"d","properties":{"spec":{"type":"object","required":["a"],"properties":{"a":{"type":"string","enum":["x","y"]}}}}}`,
			want: `{"type":"object","description":"d","properties":{"spec":{"type":"object","required":["a"],"properties":{"a":{"type":"string","enum":["x","y"]}}}}}`,
		},
		"unknown fields at the root: a bare object": {
			in:   `{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"spec":{"type":"object"}}}`,
			want: `{"type":"object"}`,
		},
		"junctors dropped": {
			in:   `{"type":"object","properties":{"spec":{"type":"object","oneOf":[{"required":["a"]}],"anyOf":[{"required":["b"]}],"not":{"required":["c"]},"allOf":[{"required":["d"]}]}}}`,
			want: `{"type":"object","properties":{"spec":{"type":"object"}}}`,
		},
		"nullable: untyped, and not required": {
			in:   `{"type":"object","required":["spec","status"],"properties":{"spec":{"type":"object","nullable":true,"properties":{"a":{"type":"string"}}},"status":{"type":"string"}}}`,
			want: `{"type":"object","required":["status"],"properties":{"spec":{},"status":{"type":"string"}}}`,
		},
		"nested unknown fields: no properties, no object type": {
			in:   `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"a":{"type":"string"}}},"list":{"type":"array","x-kubernetes-preserve-unknown-fields":true,"items":{"type":"string"}}}}`,
			want: `{"type":"object","properties":{"spec":{"x-kubernetes-preserve-unknown-fields":true},"list":{"x-kubernetes-preserve-unknown-fields":true}}}`,
		},
		"embedded resource gets type and object meta": {
			in: `{"type":"object","properties":{"template":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"spec":{"type":"object"}}}}}`,
			want: `{"type":"object","properties":{"template":{"type":"object","x-kubernetes-embedded-resource":true,"required":["kind","apiVersion"],"properties":{"spec":{"type":"object"},` +
				`"apiVersion":{"type":"string","description":"` + descAPIVersion + `"},"kind":{"type":"string","description":"` + descKind + `"},` +
				`"metadata":{"$ref":"#/definitions/` + objectMetaRef + `","description":"` + descMetadata + `"}}}}}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in, err := api.DecodeMap([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			want, err := api.DecodeMap([]byte(tc.want))
			if err != nil {
				t.Fatal(err)
			}
			if name != "unknown fields at the root: a bare object" {
				props, _ := want["properties"].(map[string]any)
				want["properties"] = withMeta(props)
			}
			want["x-kubernetes-group-version-kind"] = gvk
			got := kindSchema(in, gvk, true)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("definition (-want +got):\n%s", d)
			}
		})
	}
}

func TestOpenAPIV2JSONHasDefinitionsOfSchemas(t *testing.T) {
	t.Parallel()
	list := []*registry.Resource{
		{GroupVersion: api.GroupVersion{Group: "stable.example.com", Version: "v1"}, Resource: "crontabs", Kind: "CronTab", Namespaced: true,
			Schema: map[string]any{"type": "object"}},
		{GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "configmaps", Kind: "ConfigMap", Namespaced: true},
	}
	defs, _ := openAPIV2JSON(list, "v1.33.0", nil)["definitions"].(map[string]any)
	if _, ok := defs["com.example.stable.v1.CronTab"]; !ok {
		t.Errorf("definitions %v lack com.example.stable.v1.CronTab", keysOf(defs))
	}
	if _, ok := defs[objectMetaRef]; !ok {
		t.Errorf("definitions %v lack %s, which the kinds refer to", keysOf(defs), objectMetaRef)
	}
	if len(defs) != 2 {
		t.Errorf("definitions %v, want only the CronTab and ObjectMeta", keysOf(defs))
	}
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestPBSchemaEncodesGnosticSchema(t *testing.T) {
	t.Parallel()
	s := map[string]any{
		"description": "A port.", "type": "object", "required": []any{"port"},
		"properties": map[string]any{
			"port":  map[string]any{"type": "integer", "format": "int32"},
			"ports": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/definitions/P"}, "x-kubernetes-list-type": "map"},
		},
		"additionalProperties": false,
	}
	b := pbSchema(s)
	if got := string(one(t, b, 4)); got != "A port." {
		t.Errorf("description = %q", got)
	}
	if got := string(one(t, b, 22, 1)); got != "object" {
		t.Errorf("type = %q", got)
	}
	if got := string(one(t, b, 19)); got != "port" {
		t.Errorf("required = %q", got)
	}
	props := pbFields(t, one(t, b, 25))[1]
	if len(props) != 2 || string(one(t, props[0], 1)) != "port" || string(one(t, props[1], 1)) != "ports" {
		t.Fatalf("properties = %q", props)
	}
	if got := string(one(t, props[0], 2, 2)); got != "int32" {
		t.Errorf("port format = %q", got)
	}
	ports := one(t, props[1], 2)
	if got := string(one(t, ports, 23, 1, 1)); got != "#/definitions/P" {
		t.Errorf("items $ref = %q", got)
	}
	ext := one(t, ports, 31)
	if name, yaml := string(one(t, ext, 1)), string(one(t, ext, 2, 2)); name != "x-kubernetes-list-type" || yaml != `"map"` {
		t.Errorf("extension = %s: %s", name, yaml)
	}
}
