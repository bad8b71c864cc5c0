package operators_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/operators"
	"github.com/converge-dev/converge/testenv"
)

type panicky struct{ widgets }

func (panicky) Setup(*manager.Manager) error { panic("boom") }

func TestParseCRDs(t *testing.T) {
	t.Parallel()
	crds, err := operators.ParseCRDs([][]byte{append(append([]byte{}, crdYAML...), "---\n"+strings.ReplaceAll(string(crdYAML), "widgets", "gadgets")...)})
	if err != nil || len(crds) != 2 || crds[1].GetName() != "gadgets.example.com" {
		t.Fatalf("ParseCRDs: %v %v", crds, err)
	}
	if _, err := operators.ParseCRDs([][]byte{[]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")}); err == nil {
		t.Error("ParseCRDs accepted a ConfigMap")
	}
}

func TestInstall(t *testing.T) {
	t.Parallel()
	env := testenv.StartT(t, testenv.Options{})
	cfg, _, err := kubeconfig.LoadKubeconfig(env.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := manager.New(cfg, manager.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	start := time.Now()
	if err := operators.Install(ctx, mgr, widgets{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("CRD established and mapped in %s", time.Since(start).Round(time.Millisecond))
	// The kind is served and mapped at once.
	w := &api.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "default", "name": "w"}}}
	if err := mgr.Client().Create(ctx, w); err != nil {
		t.Fatalf("create a Widget right after Install: %v", err)
	}
	// Applying again updates in place.
	if err := operators.ApplyCRDs(ctx, mgr.Client(), [][]byte{crdYAML}, 0); err != nil {
		t.Fatalf("re-apply: %v", err)
	}
	// A panicking Setup is an error naming the operator, not a crash.
	err = operators.Install(ctx, mgr, panicky{})
	if !errors.Is(err, operators.ErrSetupPanic) || !strings.Contains(err.Error(), "operator widgets: setup") {
		t.Fatalf("Install(panicky) = %v", err)
	}
}

// TestFromSymbols: what a plugin exports decides whether it loads, and a
// plugin exporting neither symbol (or a wrong one) is refused with a reason.
func TestFromSymbols(t *testing.T) {
	t.Parallel()
	var op operators.Operator = widgets{}
	var nilOp operators.Operator
	for _, tc := range []struct {
		name    string
		symbols map[string]any
		want    string // error substring; "" for success
	}{
		{"var Operator", map[string]any{operators.SymbolOperator: &op}, ""},
		{"func New", map[string]any{operators.SymbolNew: func() operators.Operator { return widgets{} }}, ""},
		{"no symbol", map[string]any{}, "Operator"},
		{"nil Operator", map[string]any{operators.SymbolOperator: &nilOp}, "is nil"},
		{"Operator of another type", map[string]any{operators.SymbolOperator: 42}, "has type int"},
		{"New of another type", map[string]any{operators.SymbolNew: func() {}}, "has type func()"},
		{"New returning nil", map[string]any{operators.SymbolNew: func() operators.Operator { return nil }}, "returned nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := operators.FromSymbols(func(name string) (any, error) {
				if s, ok := tc.symbols[name]; ok {
					return s, nil
				}
				return nil, errors.New("symbol " + name + " not found")
			})
			switch {
			case tc.want == "" && (err != nil || got == nil):
				t.Fatalf("FromSymbols = %v, %v; want an operator", got, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("FromSymbols error = %v; want one containing %q", err, tc.want)
			}
		})
	}
}
