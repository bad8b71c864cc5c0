package greeting

import (
	"context"
	_ "embed"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/operators"
)

//go:embed crd.yaml
var crd []byte

// GroupVersion of the Greeting kind.
var GroupVersion = api.GroupVersion{Group: "examples.converge.dev", Version: "v1alpha1"}

// Finalizer is set on every Greeting until its deletion is handled.
const Finalizer = "examples.converge.dev/greeting"

// Greeting asks for a ConfigMap holding a message.
type Greeting struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           GreetingSpec   `json:"spec,omitempty"`
	Status         GreetingStatus `json:"status,omitempty"`
}

// GreetingSpec is the desired state.
type GreetingSpec struct {
	Message string `json:"message,omitempty"`
}

// GreetingStatus is the observed state.
type GreetingStatus struct {
	ObservedGeneration int64           `json:"observedGeneration,omitempty"`
	Conditions         []api.Condition `json:"conditions,omitempty"`
}

// GreetingList is a list of Greetings.
type GreetingList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty"`
	Items        []Greeting `json:"items"`
}

// AddToScheme registers Greeting and GreetingList.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion, &Greeting{}, &GreetingList{})
}

// Operator is the greeting operator.
type Operator struct{}

// New returns the operator.
func New() operators.Operator { return Operator{} }

// Name implements operators.Operator.
func (Operator) Name() string { return "greeting" }

// CRDs implements operators.Operator.
func (Operator) CRDs() [][]byte { return [][]byte{crd} }

// Setup implements operators.Operator.
func (Operator) Setup(mgr *manager.Manager) error {
	if err := AddToScheme(mgr.Scheme()); err != nil {
		return err
	}
	if err := corev1.AddToScheme(mgr.Scheme()); err != nil {
		return err
	}
	return builder.ControllerManagedBy(mgr).
		Named("greeting").
		For(builder.Kind[*Greeting]()).
		Owns(builder.Kind[*corev1.ConfigMap]()).
		Complete(&Reconciler{Reader: mgr.Reader(), Client: mgr.Client()})
}

// Reconciler keeps a Greeting's ConfigMap and status up to date.
type Reconciler struct {
	// Reader reads Greetings from the manager's cache (the controller
	// watches them).
	Reader client.Reader
	// Client writes. CreateOrUpdate reads the ConfigMap through it: a fresh
	// read before the write it decides.
	Client *client.Client
}

// ConfigMapName is the name of the ConfigMap of Greeting name.
func ConfigMapName(name string) string { return "greeting-" + name }

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	g := &Greeting{}
	if err := r.Reader.Get(ctx, req.ObjectKey, g); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if g.DeletionTimestamp != nil {
		// The ConfigMap goes with its owner (garbage collector); release the Greeting.
		if controllerutil.RemoveFinalizer(g, Finalizer) {
			return reconcile.Result{}, r.Client.Update(ctx, g)
		}
		return reconcile.Result{}, nil
	}
	if controllerutil.AddFinalizer(g, Finalizer) {
		if err := r.Client.Update(ctx, g); err != nil {
			return reconcile.Result{}, err
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: g.Namespace, Name: ConfigMapName(g.Name)}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"message": g.Spec.Message}
		return controllerutil.SetControllerReference(g, cm, r.Client.Scheme())
	}); err != nil {
		return reconcile.Result{}, fmt.Errorf("configmap %s: %w", cm.Name, err)
	}
	changed := controllerutil.SetStatusCondition(&g.Status.Conditions, api.Condition{
		Type: "Ready", Status: "True", Reason: "ConfigMapReady", ObservedGeneration: g.Generation,
		Message: "ConfigMap " + cm.Name + " holds the message",
	})
	if changed || g.Status.ObservedGeneration != g.Generation {
		g.Status.ObservedGeneration = g.Generation
		return reconcile.Result{}, r.Client.Status().Update(ctx, g)
	}
	return reconcile.Result{}, nil
}
