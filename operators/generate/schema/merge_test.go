package schema

import (
	"encoding/json"
	"strings"
	"testing"

	crdapi "github.com/converge-dev/converge/crd/api"
)

func TestMerge(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name     string
		dst, src crdapi.JSONSchemaProps
		want     string
		wantErr  string
	}{
		{name: "unset values are taken", dst: crdapi.JSONSchemaProps{Type: "integer"}, src: crdapi.JSONSchemaProps{Minimum: f(1)},
			want: `{"type":"integer","minimum":1}`},
		{name: "equal values are kept", dst: crdapi.JSONSchemaProps{Type: "integer", Minimum: f(1)}, src: crdapi.JSONSchemaProps{Type: "integer", Minimum: f(1)},
			want: `{"type":"integer","minimum":1}`},
		{name: "conflicts are kept in an allOf", dst: crdapi.JSONSchemaProps{Type: "integer", Maximum: f(5)}, src: crdapi.JSONSchemaProps{Maximum: f(3)},
			want: `{"type":"integer","allOf":[{"maximum":5},{"maximum":3}]}`},
		{name: "the destination's enum and description win", dst: crdapi.JSONSchemaProps{Description: "d", Enum: []crdapi.JSON{{Raw: []byte(`"a"`)}}},
			src: crdapi.JSONSchemaProps{Description: "s", Enum: []crdapi.JSON{{Raw: []byte(`"b"`)}}}, want: `{"description":"d","enum":["a"]}`},
		{name: "validations: the source's first", dst: crdapi.JSONSchemaProps{XValidations: []crdapi.ValidationRule{{Rule: "type"}}},
			src: crdapi.JSONSchemaProps{XValidations: []crdapi.ValidationRule{{Rule: "field"}}}, want: `{"x-kubernetes-validations":[{"rule":"field"},{"rule":"type"}]}`},
		{name: "properties merge and required joins", dst: crdapi.JSONSchemaProps{Type: "object", Required: []string{"b"},
			Properties: map[string]crdapi.JSONSchemaProps{"b": {Type: "string"}}},
			src:  crdapi.JSONSchemaProps{Type: "object", Required: []string{"a", "b"}, Properties: map[string]crdapi.JSONSchemaProps{"a": {Type: "integer"}, "b": {MaxLength: new(int64)}}},
			want: `{"type":"object","required":["a","b"],"properties":{"a":{"type":"integer"},"b":{"type":"string","maxLength":0}}}`},
		{name: "type conflict", dst: crdapi.JSONSchemaProps{Type: "string"}, src: crdapi.JSONSchemaProps{Type: "integer"}, wantErr: "conflicting types string and integer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := merge(&c.dst, c.src)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(c.dst)
			var g, w any
			_ = json.Unmarshal(got, &g)
			if err := json.Unmarshal([]byte(c.want), &w); err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(g)
			wj, _ := json.Marshal(w)
			if string(gj) != string(wj) {
				t.Fatalf("got  %s\nwant %s", gj, wj)
			}
		})
	}
}
