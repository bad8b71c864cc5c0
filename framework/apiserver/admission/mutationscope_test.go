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

func TestMayReadManagedFields(t *testing.T) {
	t.Parallel()
	cmCreate := &Attributes{Operation: Create, Resource: api.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true}
	hooks := func(rules ...Rule) func(context.Context) ([]Hook, error) {
		return func(context.Context) ([]Hook, error) { return []Hook{{Name: "h", Rules: rules}}, nil }
	}
	all := Rule{Operations: []string{"*"}, APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}}
	pods := Rule{Operations: []string{"*"}, APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}
	none := func(context.Context) ([]Hook, error) { return nil, nil }
	for _, tt := range []struct {
		name string
		w    *Webhooks
		want bool
	}{
		{"validating, a hook for every resource", &Webhooks{Hooks: hooks(all)}, true},
		{"mutating, a hook for every resource", &Webhooks{Mutating: true, Hooks: hooks(all)}, true},
		{"validating, a hook for pods", &Webhooks{Hooks: hooks(pods)}, false},
		{"mutating, no hooks", &Webhooks{Mutating: true, Hooks: none}, false},
		{"hooks that cannot be listed", &Webhooks{Hooks: func(context.Context) ([]Hook, error) { return nil, errors.New("boom") }}, true},
	} {
		if got := tt.w.MayReadManagedFields(t.Context(), cmCreate); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	quiet := &Chain{Mutators: []Mutator{&Webhooks{Mutating: true, Hooks: none}}, Validators: []Validator{&Webhooks{Hooks: none}}}
	if quiet.MayReadManagedFields(t.Context(), cmCreate) {
		t.Error("a chain of webhooks without hooks: MayReadManagedFields true")
	}
	if (*Chain)(nil).MayReadManagedFields(t.Context(), cmCreate) {
		t.Error("no chain: MayReadManagedFields true")
	}
	nop := func(context.Context, *Attributes) error { return nil }
	for _, c := range []*Chain{
		{Mutators: append(quiet.Mutators, MutatorFunc(nop)), Validators: quiet.Validators},
		{Mutators: quiet.Mutators, Validators: append(quiet.Validators, ValidatorFunc(nop))},
	} {
		if !c.MayReadManagedFields(t.Context(), cmCreate) {
			t.Error("a chain with a plugin that does not say what it reads: MayReadManagedFields false")
		}
	}
}
