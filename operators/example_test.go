package operators_test

import (
	"context"
	"fmt"

	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/operators"
	"github.com/converge-dev/converge/operators/examples/greeting"
)

var crdYAML = []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`)

// widgets is an operator: a name, its CRDs and a Setup that registers its
// controllers. Its plugin's main package would say
//
//	var Operator operators.Operator = widgets{}
type widgets struct{}

func (widgets) Name() string   { return "widgets" }
func (widgets) CRDs() [][]byte { return [][]byte{crdYAML} } // usually //go:embed crd.yaml

func (widgets) Setup(mgr *manager.Manager) error {
	if err := greeting.AddToScheme(mgr.Scheme()); err != nil { // register your types
		return err
	}
	return builder.ControllerManagedBy(mgr).
		For(builder.Kind[*greeting.Greeting]()).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, nil
		}))
}

// The optional interfaces are separate one-method interfaces.
var _ operators.Operator = widgets{}

// Running an operator in your own binary: a manager, Install, Start.
// (converge up does the same with its shared manager for every plugin.)
func Example() {
	run := func(ctx context.Context) error {
		cfg, _, err := kubeconfig.FromEnvironment("", "")
		if err != nil {
			return err
		}
		mgr, err := manager.New(cfg, manager.Options{Scheme: scheme.New()})
		if err != nil {
			return err
		}
		// CRDs applied and Established, then Setup (panics recovered), then health checks.
		if err := operators.Install(ctx, mgr, widgets{}); err != nil {
			return err
		}
		return mgr.Start(ctx)
	}
	_ = run
}

// A plugin exports its Operator under a conventional symbol; a host finds it
// with FromSymbols (package loader does this after its build-info checks).
func ExampleFromSymbols() {
	var Operator operators.Operator = widgets{} // in the plugin's main package
	symbols := map[string]any{operators.SymbolOperator: &Operator}
	op, err := operators.FromSymbols(func(name string) (any, error) {
		if s, ok := symbols[name]; ok {
			return s, nil
		}
		return nil, operators.ErrNoSymbol
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(op.Name())
	// Output: widgets
}
