package admission

import (
	"context"
	"testing"
)

func TestChainAdmitReport(t *testing.T) {
	t.Parallel()
	noHooks := &Webhooks{Mutating: true, Hooks: func(context.Context) ([]Hook, error) { return nil, nil }}
	replace := MutatorFunc(func(_ context.Context, a *Attributes) error {
		a.Object = map[string]any{"replaced": true}
		return nil
	})
	tests := []struct {
		name  string
		chain *Chain
		want  bool
	}{
		{"empty chain", &Chain{}, false},
		{"webhooks without a match", &Chain{Mutators: []Mutator{noHooks}}, false},
		{"a mutator that cannot tell", &Chain{Mutators: []Mutator{noHooks, replace}}, true},
	}
	for _, tt := range tests {
		a := &Attributes{Operation: Create, Object: map[string]any{}}
		got, err := tt.chain.AdmitReport(context.Background(), a)
		if err != nil || got != tt.want {
			t.Errorf("%s: changed %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}
