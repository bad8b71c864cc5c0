package registry

import (
	"context"
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
