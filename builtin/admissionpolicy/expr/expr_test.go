package expr

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
)

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name string
		src  Source
		want []string // field paths with errors
	}{
		{"valid", Source{Validations: []Validation{{Expression: "object.spec.replicas > 1", MessageExpression: "'got ' + string(object.spec.replicas)"}}}, nil},
		{"syntax", Source{Validations: []Validation{{Expression: "object.("}}}, []string{"spec.validations[0].expression"}},
		{"not a bool", Source{Validations: []Validation{{Expression: "'yes'"}}}, []string{"spec.validations[0].expression"}},
		{"message not a string", Source{Validations: []Validation{{Expression: "true", MessageExpression: "1"}}}, []string{"spec.validations[0].messageExpression"}},
		{"undeclared variable", Source{Validations: []Validation{{Expression: "variables.missing"}}}, []string{"spec.validations[0].expression"}},
		{"variables compose in order", Source{
			Variables:   []NamedExpression{{Name: "a", Expression: "1"}, {Name: "b", Expression: "variables.a + 1"}},
			Validations: []Validation{{Expression: "variables.b == 2"}}}, nil},
		{"a variable cannot use a later one", Source{
			Variables: []NamedExpression{{Name: "a", Expression: "variables.b"}, {Name: "b", Expression: "1"}}}, []string{"spec.variables[0].expression"}},
		{"audit annotation must be a string", Source{AuditAnnotations: []NamedExpression{{Name: "k", Expression: "1"}}}, []string{"spec.auditAnnotations[0].valueExpression"}},
		{"audit annotation may be null", Source{AuditAnnotations: []NamedExpression{{Name: "k", Expression: "null"}}}, nil},
		{"matchCondition", Source{MatchConditions: []NamedExpression{{Name: "m", Expression: "request.("}}}, []string{"spec.matchConditions[0].expression"}},
		{"authorizer", Source{Validations: []Validation{{Expression: "authorizer.group('apps').resource('deployments').namespace('x').check('create').allowed()"}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := Compile(tt.src)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("errors at %v, want %v (%v)", got, tt.want, errs)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	calls := 0
	p, errs := Compile(Source{
		Variables: []NamedExpression{
			{Name: "replicas", Expression: "object.spec.replicas"},
			{Name: "odd", Expression: "variables.replicas % 2 == 1"},
		},
		Validations: []Validation{
			{Expression: "variables.replicas > 1"},
			{Expression: "variables.odd"},
			{Expression: "authorizer.group('apps').resource('deployments').namespace('ns').check('delete').allowed()"},
			{Expression: "params == null && namespaceObject.metadata.name == 'ns' && request.operation == 'CREATE'"},
			{Expression: "authorizer.requestResource.check('delete').allowed()"},
		},
	})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	authz := func(_ context.Context, c Check) (bool, string, error) {
		calls++
		return c.User == "alice" && c.Verb == "delete" && c.Group == "apps" && c.Resource == "deployments" && c.Namespace == "ns", "", nil
	}
	for _, tt := range []struct {
		replicas int64
		want     []bool
	}{{3, []bool{true, true, true, true, true}}, {2, []bool{true, false, true, true, true}}, {1, []bool{false, true, true, true, true}}} {
		a := p.Activation(context.Background(), Input{
			Object:          map[string]any{"spec": map[string]any{"replicas": tt.replicas}},
			NamespaceObject: map[string]any{"metadata": map[string]any{"name": "ns"}},
			Request: map[string]any{"operation": "CREATE", "namespace": "ns", "userInfo": map[string]any{"username": "alice", "groups": []any{}},
				"resource": map[string]any{"group": "apps", "version": "v1", "resource": "deployments"}},
			Authorizer: authz,
		})
		for i, v := range p.Validations {
			out, err := v.Eval(a)
			if err != nil {
				t.Fatalf("replicas %d, validation %d: %v", tt.replicas, i, err)
			}
			if out != types.Bool(tt.want[i]) {
				t.Errorf("replicas %d, validation %d = %v, want %v", tt.replicas, i, out, tt.want[i])
			}
		}
	}
	if calls != 6 {
		t.Errorf("authorizer called %d times, want 6", calls)
	}
}

type testSpec struct {
	Replicas *int32            `json:"replicas,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
}

type testKind struct {
	Kind string   `json:"kind"`
	Spec testSpec `json:"spec"`
}

func TestTypeCheck(t *testing.T) {
	d := NewDeclaredTypes()
	goType := d.FromGo("test.Kind", reflect.TypeFor[testKind]())
	crdType := d.FromSchema("test.CronTab", map[string]any{"type": "object", "properties": map[string]any{
		"spec": map[string]any{"type": "object", "properties": map[string]any{"replicas": map[string]any{"type": "integer"}}},
	}}, nil)
	kinds := func(t *cel.Type) []Typed {
		return []Typed{{Name: "test", Decls: Decls{Object: t, OldObject: t, Options: []cel.EnvOption{cel.CustomTypeProvider(d)}}}}
	}
	src := Source{Validations: []Validation{
		{Expression: "object.spec.replicas > '1'", MessageExpression: "'got ' + object.spec.replicas"},
		{Expression: "object.spec.maxRetries < 10"},
		{Expression: "object.spec.replicas > 1"},
	}}
	for name, typ := range map[string]*cel.Type{"go": goType, "schema": crdType} {
		got := TypeCheck(src, kinds(typ))
		if len(got) != 3 {
			t.Fatalf("%s: %d warnings, want 3: %v", name, len(got), got)
		}
		for i, w := range []struct{ field, text string }{
			{"spec.validations[0].expression", "found no matching overload for '_>_' applied to '(int, string)'"},
			{"spec.validations[0].messageExpression", "found no matching overload for '_+_' applied to '(string, int)'"},
			{"spec.validations[1].expression", "undefined field 'maxRetries'"},
		} {
			if got[i].FieldRef != w.field || !strings.Contains(got[i].Warning, w.text) {
				t.Errorf("%s: warning %d = %+v, want %s: %s", name, i, got[i], w.field, w.text)
			}
		}
	}
	if got := TypeCheck(src, nil); len(got) != 0 {
		t.Errorf("untyped check: %v, want no warnings", got)
	}
}
