package admissionpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

// fakeCache serves objects by resource, as the watch cache would.
type fakeCache map[string][][]byte

func (f fakeCache) list(_ context.Context, gvr api.GroupVersionResource, _ string) ([][]byte, int64, error) {
	return f[gvr.Resource], 1, nil
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidate(t *testing.T) {
	rules := []any{map[string]any{"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"configmaps"}}}
	vap := func(failurePolicy string, validations []any, audit []any) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": "p"}, "spec": map[string]any{
			"failurePolicy": failurePolicy, "matchConstraints": map[string]any{"resourceRules": rules},
			"validations": validations, "auditAnnotations": audit}}
	}
	binding := func(actions ...string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": "b"}, "spec": map[string]any{"policyName": "p", "validationActions": actions}}
	}
	notDebug := []any{map[string]any{"expression": "!('debug' in object.data)", "message": "no debug"}}
	failing := []any{map[string]any{"expression": "object.data.missing == 'x'"}}
	tests := []struct {
		name     string
		policy   map[string]any
		binding  map[string]any
		data     map[string]any
		wantErr  string
		wantCode int32
		warnings []string
		audit    map[string]string
	}{
		{name: "allowed", policy: vap("Fail", notDebug, nil), binding: binding("Deny"), data: map[string]any{"a": "1"}},
		{name: "denied", policy: vap("Fail", notDebug, nil), binding: binding("Deny"), data: map[string]any{"debug": "1"},
			wantErr: `configmaps "c" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no debug`, wantCode: 422},
		{name: "warned", policy: vap("Fail", notDebug, nil), binding: binding("Warn"), data: map[string]any{"debug": "1"},
			warnings: []string{"Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': no debug"}},
		{name: "audited", policy: vap("Fail", notDebug, nil), binding: binding("Audit"), data: map[string]any{"debug": "1"},
			audit: map[string]string{ValidationFailureAnnotation: `[{"binding":"b","expressionIndex":0,"message":"no debug","policy":"p","validationActions":["Audit"]}]`}},
		{name: "error under Fail", policy: vap("Fail", failing, nil), binding: binding("Deny"), data: map[string]any{},
			wantErr: "denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing", wantCode: 422},
		{name: "error under Ignore", policy: vap("Ignore", failing, nil), binding: binding("Deny"), data: map[string]any{}},
		{name: "audit annotation", policy: vap("Fail", nil, []any{map[string]any{"key": "size", "valueExpression": "string(size(object.data))"}}),
			binding: binding("Deny"), data: map[string]any{"a": "1", "b": "2"}, audit: map[string]string{"p/size": "2"}},
		{name: "null audit annotation is left out", policy: vap("Fail", nil, []any{map[string]any{"key": "none", "valueExpression": "null"}}),
			binding: binding("Deny"), data: map[string]any{}, audit: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := fakeCache{
				"validatingadmissionpolicies":       {mustJSON(t, tt.policy)},
				"validatingadmissionpolicybindings": {mustJSON(t, tt.binding)},
			}
			audit := map[string]string{}
			p := New(Options{List: cache.list, Audit: func(_ context.Context, k, v string) { audit[k] = v }})
			var warnings []string
			ctx := admission.WithWarnings(context.Background(), func(s string) { warnings = append(warnings, s) })
			err := p.Validate(ctx, &admission.Attributes{Operation: admission.Create, Name: "c", Namespace: "",
				Resource: api.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: api.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
				Object: map[string]any{"metadata": map[string]any{"name": "c"}, "data": tt.data}})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tt.wantErr != "" {
				var se *apierrors.StatusError
				if !errors.As(err, &se) || !strings.Contains(se.ErrStatus.Message, tt.wantErr) || se.ErrStatus.Code != tt.wantCode {
					t.Fatalf("error %v, want %d %q", err, tt.wantCode, tt.wantErr)
				}
			}
			if strings.Join(warnings, "\n") != strings.Join(tt.warnings, "\n") {
				t.Errorf("warnings %q, want %q", warnings, tt.warnings)
			}
			if tt.audit != nil && len(audit) != len(tt.audit) {
				t.Errorf("audit annotations %v, want %v", audit, tt.audit)
			}
			for k, v := range tt.audit {
				if audit[k] != v {
					t.Errorf("audit annotation %s = %q, want %q", k, audit[k], v)
				}
			}
		})
	}
}

// TestNoBindingsReadsOnce: a write with no binding costs one cache read.
func TestNoBindingsReadsOnce(t *testing.T) {
	reads := 0
	p := New(Options{List: func(context.Context, api.GroupVersionResource, string) ([][]byte, int64, error) {
		reads++
		return nil, 1, nil
	}})
	a := &admission.Attributes{Operation: admission.Create, Resource: api.GroupVersionResource{Version: "v1", Resource: "configmaps"}}
	if err := p.Validate(context.Background(), a); err != nil || reads != 1 {
		t.Fatalf("Validate = %v after %d reads, want nil after 1", err, reads)
	}
}

// BenchmarkValidate is the cost a policy adds to a write: no binding, a
// binding whose policy matches other resources, and one that evaluates.
func BenchmarkValidate(b *testing.B) {
	policy := func(resource string) []byte {
		return []byte(`{"metadata":{"name":"p"},"spec":{"failurePolicy":"Fail","matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["` +
			resource + `"]}]},"validations":[{"expression":"size(object.data) < 10","message":"too many keys"}]}}`)
	}
	bindings := [][]byte{[]byte(`{"metadata":{"name":"b"},"spec":{"policyName":"p","validationActions":["Deny"]}}`)}
	a := &admission.Attributes{Operation: admission.Create, Name: "c", Resource: api.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Kind: api.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Object: map[string]any{"metadata": map[string]any{"name": "c"}, "data": map[string]any{"a": "1"}}}
	for _, c := range []struct {
		name  string
		cache fakeCache
	}{
		{"no binding", fakeCache{}},
		{"binding, other resource", fakeCache{"validatingadmissionpolicies": {policy("secrets")}, "validatingadmissionpolicybindings": bindings}},
		{"binding, evaluated", fakeCache{"validatingadmissionpolicies": {policy("configmaps")}, "validatingadmissionpolicybindings": bindings}},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := New(Options{List: c.cache.list})
			ctx := context.Background()
			for b.Loop() {
				if err := p.Validate(ctx, a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
