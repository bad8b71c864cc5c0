package admission

import (
	"context"
	"errors"
	"testing"

	"github.com/converge-dev/converge/framework/api"
)

func TestWebhooksMayMutate(t *testing.T) {
	t.Parallel()
	cmUpdate := &Attributes{Operation: Update, Resource: api.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true}
	rule := func(op, group, version, res string) Rule {
		return Rule{Operations: []string{op}, APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{res}}
	}
	hooks := func(rules ...Rule) func(context.Context) ([]Hook, error) {
		return func(context.Context) ([]Hook, error) { return []Hook{{Name: "h", Rules: rules}}, nil }
	}
	tests := []struct {
		name string
		w    *Webhooks
		want bool
	}{
		{"validating webhooks never mutate", &Webhooks{Hooks: hooks(rule("*", "*", "*", "*"))}, false},
		{"no hooks", &Webhooks{Mutating: true, Hooks: func(context.Context) ([]Hook, error) { return nil, nil }}, false},
		{"a hook for every resource", &Webhooks{Mutating: true, Hooks: hooks(rule("*", "*", "*", "*"))}, true},
		{"a hook for configmaps in another version (equivalent)", &Webhooks{Mutating: true, Hooks: hooks(rule("UPDATE", "", "v2", "configmaps"))}, true},
		{"a hook for pods", &Webhooks{Mutating: true, Hooks: hooks(rule("*", "", "v1", "pods"))}, false},
		{"a hook for creates", &Webhooks{Mutating: true, Hooks: hooks(rule("CREATE", "", "v1", "configmaps"))}, false},
		{"a hook for another group", &Webhooks{Mutating: true, Hooks: hooks(rule("*", "apps", "*", "*"))}, false},
		{"hooks that cannot be listed", &Webhooks{Mutating: true, Hooks: func(context.Context) ([]Hook, error) { return nil, errors.New("boom") }}, true},
	}
	for _, tt := range tests {
		if got := tt.w.MayMutate(t.Context(), cmUpdate); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	chain := &Chain{Mutators: []Mutator{tests[1].w, MutatorFunc(func(context.Context, *Attributes) error { return nil })}}
	if !chain.MayMutate(t.Context(), cmUpdate) {
		t.Error("a chain with a mutator that does not say what it changes: MayMutate false")
	}
	if (&Chain{Mutators: []Mutator{tests[1].w}}).MayMutate(t.Context(), cmUpdate) {
		t.Error("a chain of webhooks without hooks: MayMutate true")
	}
}
