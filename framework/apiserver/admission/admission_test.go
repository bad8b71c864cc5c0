package admission

import (
	"testing"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

func TestRuleMatches(t *testing.T) {
	t.Parallel()
	pods := &Attributes{Operation: Create, Resource: api.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}
	status := &Attributes{Operation: Update, Resource: api.GroupVersionResource{Version: "v1", Resource: "pods"}, Subresource: "status", Namespaced: true}
	nodes := &Attributes{Operation: Create, Resource: api.GroupVersionResource{Version: "v1", Resource: "nodes"}}
	rule := func(res string, scope string) Rule {
		return Rule{Operations: []string{"*"}, APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{res}, Scope: scope}
	}
	tests := []struct {
		name string
		r    Rule
		a    *Attributes
		want bool
	}{
		{"exact", rule("pods", "*"), pods, true},
		{"no subresource", rule("pods", "*"), status, false},
		{"pods/status", rule("pods/status", "*"), status, true},
		{"pods/*", rule("pods/*", "*"), status, true},
		{"*/status", rule("*/status", ""), status, true},
		{"* has no subresources", rule("*", "*"), status, false},
		{"*/*", rule("*/*", "*"), status, true},
		{"cluster scope", rule("*", "Cluster"), pods, false},
		{"cluster scope node", rule("*", "Cluster"), nodes, true},
		{"namespaced scope", rule("*", "Namespaced"), nodes, false},
		{"operation", Rule{Operations: []string{"DELETE"}, APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}}, pods, false},
	}
	for _, tt := range tests {
		if got := tt.r.Matches(tt.a); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDenied(t *testing.T) {
	t.Parallel()
	err := denied("x.example.com", &api.Status{Message: "no"})
	if err.Error() != `admission webhook "x.example.com" denied the request: no` || apierrors.CodeForError(err) != 400 {
		t.Errorf("got %v (%d)", err, apierrors.CodeForError(err))
	}
	if err := denied("x.example.com", nil); err.Error() != `admission webhook "x.example.com" denied the request without explanation` {
		t.Errorf("got %v", err)
	}
}
