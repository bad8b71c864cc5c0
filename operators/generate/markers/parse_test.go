package markers_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/converge-dev/converge/operators/generate/markers"
)

func TestParse(t *testing.T) {
	t.Parallel()
	r := markers.CRD()
	for _, c := range []struct {
		text    string
		target  markers.Target
		name    string
		want    any
		wantErr string
	}{
		{text: "+optional", target: markers.Field, name: "optional", want: nil},
		{text: "+optional", target: markers.Type}, // not a type marker: ignored
		{text: "+genclient", target: markers.Type},
		{text: "+kubebuilder:object:root=true", target: markers.Type},
		{text: "+groupName=apps.example.com", target: markers.Package, name: "groupName", want: "apps.example.com"},
		{text: "+kubebuilder:validation:Minimum=-1.5", target: markers.Field, name: "kubebuilder:validation:Minimum", want: -1.5},
		{text: "+kubebuilder:validation:MaxLength=12", target: markers.Field, name: "kubebuilder:validation:MaxLength", want: 12},
		{text: "+kubebuilder:validation:UniqueItems=true", target: markers.Type, name: "kubebuilder:validation:UniqueItems", want: true},
		{text: "+kubebuilder:validation:Pattern=`^a,b$`", target: markers.Field, name: "kubebuilder:validation:Pattern", want: "^a,b$"},
		{text: `+kubebuilder:validation:Pattern="^a\"b$"`, target: markers.Field, name: "kubebuilder:validation:Pattern", want: `^a"b$`},
		{text: "+kubebuilder:validation:Enum=a;b;3;true", target: markers.Field, name: "kubebuilder:validation:Enum", want: []any{"a", "b", 3, true}},
		{text: "+kubebuilder:validation:Enum={a,\"b c\"}", target: markers.Field, name: "kubebuilder:validation:Enum", want: []any{"a", "b c"}},
		{text: "+kubebuilder:default=2.5", target: markers.Field, name: "kubebuilder:default", want: 2.5},
		{text: "+kubebuilder:default=-3", target: markers.Field, name: "kubebuilder:default", want: -3},
		{text: "+kubebuilder:default=hello world", target: markers.Field, name: "kubebuilder:default", want: "hello world"},
		{text: "+kubebuilder:default=trueish", target: markers.Field, name: "kubebuilder:default", want: "trueish"},
		{text: "+kubebuilder:default={a: {b: 1}, c: [x]}", target: markers.Field, name: "kubebuilder:default",
			want: map[string]any{"a": map[string]any{"b": 1}, "c": "[x]"}},
		{text: "+kubebuilder:default={1,2}", target: markers.Field, name: "kubebuilder:default", want: []any{1, 2}},
		{text: `+default={"a": null}`, target: markers.Field, name: "default", want: map[string]any{"a": nil}},
		{text: "+kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`", target: markers.Type,
			name: "kubebuilder:printcolumn", want: map[string]any{"name": "Age", "type": "date", "JSONPath": ".metadata.creationTimestamp"}},
		{text: "+kubebuilder:resource:shortName={a,b},categories=x;y,scope=Cluster", target: markers.Type, name: "kubebuilder:resource",
			want: map[string]any{"shortName": []string{"a", "b"}, "categories": []string{"x", "y"}, "scope": "Cluster"}},
		{text: "+kubebuilder:rbac:groups=\"\",resources=pods;pods/log,verbs=get", target: markers.Package, name: "kubebuilder:rbac",
			want: map[string]any{"groups": []string{""}, "resources": []string{"pods", "pods/log"}, "verbs": []string{"get"}}},
		{text: "+kubebuilder:validation:items:Minimum=1", target: markers.Field, name: "kubebuilder:validation:items:Minimum", want: 1.0},
		{text: "+kubebuilder:subresource:status=x", target: markers.Type, wantErr: "takes no value"},
		{text: "+kubebuilder:printcolumn:name=Age,type=date", target: markers.Type, wantErr: `missing argument "JSONPath"`},
		{text: "+kubebuilder:validation:MaxLength=12 13", target: markers.Field, wantErr: "extra arguments"},
		{text: "+kubebuilder:validation:UniqueItems=yes", target: markers.Field, wantErr: "expected true or false"},
		{text: "+kubebuilder:validation:Pattern=a,b", target: markers.Field, wantErr: "extra arguments"},
		{text: "+kubebuilder:validation:Enum={a,b", target: markers.Field, wantErr: "unterminated list"},
		{text: "+default={bad", target: markers.Field, wantErr: "not JSON"},
	} {
		t.Run(c.text, func(t *testing.T) {
			m, err := r.Parse(c.text, c.target)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.name == "" {
				if m != nil {
					t.Fatalf("parsed %+v, want it ignored", m)
				}
				return
			}
			if m == nil || m.Name != c.name || !reflect.DeepEqual(m.Value, c.want) {
				t.Fatalf("got %#v, want %s = %#v", m, c.name, c.want)
			}
		})
	}
}
