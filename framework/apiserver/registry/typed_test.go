package registry

import (
	"context"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

type widget struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           struct {
		Size  int64             `json:"size"`
		Tags  map[string]string `json:"tags,omitempty"`
		Parts []struct {
			Name string `json:"name"`
		} `json:"parts,omitempty"`
	} `json:"spec"`
}

func TestTypedCanonicalizeTypedKeepsTheDecodedValue(t *testing.T) {
	t.Parallel()
	var validated *widget
	s := Typed[widget]{
		Default: func(w *widget) {
			if w.Spec.Size == 0 {
				w.Spec.Size = 3
			}
		},
		Validate: func(w *widget) field.ErrorList { validated = w; return nil },
	}
	obj := map[string]any{"apiVersion": "x/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "bogus": 1},
		"spec":     map[string]any{"tags": map[string]any{"a": "b"}, "parts": []any{map[string]any{"name": "p", "extra": true}}, "nope": 1}}
	out, dec, unknown, errs := s.CanonicalizeTyped(obj)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if diff := cmp.Diff([]string{"metadata.bogus", "spec.nope", "spec.parts[0].extra"}, unknown); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
	if got, _ := api.NestedInt64(out, "spec", "size"); got != 3 {
		t.Errorf("defaulted size = %d, want 3", got)
	}
	if dec.Meta == nil || dec.Meta.Name != "w" {
		t.Fatalf("Decoded.Meta = %+v, want the object's metadata", dec.Meta)
	}
	if errs := s.ValidateCreateTyped(context.Background(), out, dec); len(errs) > 0 {
		t.Fatal(errs)
	}
	if validated != dec.Value {
		t.Error("ValidateCreateTyped did not validate the decoded value")
	}
	// Without a decoded value it decodes the map, like ValidateCreate.
	if errs := s.ValidateCreateTyped(context.Background(), out, Decoded{}); len(errs) > 0 || validated == dec.Value {
		t.Errorf("ValidateCreateTyped without a value: %v", errs)
	}
	// Canonicalize reports the same as before.
	out2, unknown2, _ := s.Canonicalize(obj)
	if diff := cmp.Diff(out, out2); diff != "" || len(unknown2) != 3 {
		t.Errorf("Canonicalize differs (-typed +plain):\n%s %v", diff, unknown2)
	}
}

// Field names match case-sensitively, as in Kubernetes: "meTadata" is an unknown
// field, not the metadata (encoding/json alone would take it as metadata).
func TestTypedCanonicalizeIsCaseSensitive(t *testing.T) {
	t.Parallel()
	obj := map[string]any{"meTadata": map[string]any{"name": "w"},
		"spec": map[string]any{"Size": int64(7), "parts": []any{map[string]any{"NAME": "p"}}}}
	out, unknown, errs := Typed[widget]{}.Canonicalize(obj)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if diff := cmp.Diff([]string{"meTadata", "spec.Size", "spec.parts[0].NAME"}, unknown); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
	if name := api.NestedString(out, "metadata", "name"); name != "" {
		t.Errorf("metadata.name = %q, want none", name)
	}
	if size, _ := api.NestedInt64(out, "spec", "size"); size != 0 {
		t.Errorf("spec.size = %d, want 0", size)
	}
	if _, ok := obj["meTadata"]; !ok {
		t.Error("Canonicalize changed its input")
	}
}

// TestPruneUnknownObjectMeta checks PruneUnknown on metadata as custom resources
// use it: keys must name an ObjectMeta field exactly, at any depth; maps of
// strings and fields with their own JSON form (times, fieldsV1) are left alone.
func TestPruneUnknownObjectMeta(t *testing.T) {
	t.Parallel()
	metaType := reflect.TypeFor[api.ObjectMeta]()
	for _, tc := range []struct {
		name        string
		meta, want  map[string]any
		wantUnknown []string
	}{
		{
			name: "exact names kept",
			meta: map[string]any{
				"name": "a", "labels": map[string]any{"Any": "key"}, "creationTimestamp": "2026-01-01T00:00:00Z",
				"managedFields": []any{map[string]any{"manager": "m", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}},
			},
			want: map[string]any{
				"name": "a", "labels": map[string]any{"Any": "key"}, "creationTimestamp": "2026-01-01T00:00:00Z",
				"managedFields": []any{map[string]any{"manager": "m", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}},
			},
		},
		{
			name:        "case differs",
			meta:        map[string]any{"namE": "a", "Labels": map[string]any{"x": "y"}},
			want:        map[string]any{},
			wantUnknown: []string{"Labels", "namE"},
		},
		{
			name: "nested owner reference",
			meta: map[string]any{"name": "a", "ownerReferences": []any{
				map[string]any{"apiVersion": "v1", "Kind": "Pod", "name": "p", "uid": "u", "extra": true}}},
			want: map[string]any{"name": "a", "ownerReferences": []any{
				map[string]any{"apiVersion": "v1", "name": "p", "uid": "u"}}},
			wantUnknown: []string{"ownerReferences[0].Kind", "ownerReferences[0].extra"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unknown := PruneUnknown(tc.meta, metaType)
			if diff := cmp.Diff(tc.wantUnknown, unknown); diff != "" {
				t.Errorf("unknown (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, tc.meta); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
		})
	}
}
