package builder

import (
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"reflect"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/predicate"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Manager is what the builder needs from a manager; *manager.Manager
// implements it.
type Manager interface {
	Client() *client.Client
	Informers() *cache.SharedInformers
	Logger() logr.Logger
	Registry() *prometheus.Registry
	TracerProvider() trace.TracerProvider
	Add(r manager.Runnable) error
}

var _ Manager = (*manager.Manager)(nil)

// Watchable is a kind the controller can watch; make one with Kind.
type Watchable interface {
	gvk(c *client.Client) (api.GroupVersionKind, error)
	source(m Manager, h handler.EventHandler, preds []predicate.Predicate) (controller.Source, error)
}

// Kind names the watched kind T, a pointer to a Go struct registered in the
// manager's scheme together with its list type (e.g. *corev1.ConfigMap).
func Kind[T api.Object]() Watchable { return kind[T]{} }

type kind[T api.Object] struct{}

func (kind[T]) gvk(c *client.Client) (api.GroupVersionKind, error) {
	rt := reflect.TypeFor[T]()
	if rt.Kind() != reflect.Pointer || rt.Elem().Kind() != reflect.Struct {
		return api.GroupVersionKind{}, fmt.Errorf("builder: %s is not a pointer to a struct", rt)
	}
	return c.GroupVersionKindFor(reflect.New(rt.Elem()).Interface())
}

func (kind[T]) source(m Manager, h handler.EventHandler, preds []predicate.Predicate) (controller.Source, error) {
	inf, err := cache.InformerFor(m.Informers(), cache.InformerOptions[T]{})
	if err != nil {
		return nil, err
	}
	return controller.Kind(inf, h, preds...), nil
}

type watch struct {
	what  string // "For", "Owns", "Watches" for error messages
	kind  Watchable
	h     handler.EventHandler // nil for For and Owns: set by Build
	preds []predicate.Predicate
}

// Builder collects a controller's configuration. Create it with
// ControllerManagedBy.
type Builder struct {
	mgr     Manager
	name    string
	fors    []watch
	owns    []watch
	watches []watch
	filters []predicate.Predicate
	opts    controller.Options
	optsSet bool
	used    bool
}

// ControllerManagedBy starts a builder for a controller run by m.
func ControllerManagedBy(m Manager) *Builder { return &Builder{mgr: m} }

// Named sets the controller's name (default: the lowercase For kind). Names
// label logs and metrics and should be unique within a manager.
func (b *Builder) Named(name string) *Builder {
	b.name = name
	return b
}

// For sets the reconciled kind; its events enqueue the object's own key.
func (b *Builder) For(k Watchable, preds ...predicate.Predicate) *Builder {
	b.fors = append(b.fors, watch{what: "For", kind: k, preds: preds})
	return b
}

// Owns watches a child kind; its events enqueue the controlling owner when
// that owner is of the For kind.
func (b *Builder) Owns(k Watchable, preds ...predicate.Predicate) *Builder {
	b.owns = append(b.owns, watch{what: "Owns", kind: k, preds: preds})
	return b
}

// Watches watches kind k with handler h.
func (b *Builder) Watches(k Watchable, h handler.EventHandler, preds ...predicate.Predicate) *Builder {
	b.watches = append(b.watches, watch{what: "Watches", kind: k, h: h, preds: preds})
	return b
}

// WithEventFilter adds a predicate applied to every watch.
func (b *Builder) WithEventFilter(p predicate.Predicate) *Builder {
	b.filters = append(b.filters, p)
	return b
}

// WithOptions sets the controller's options (MaxConcurrentReconciles,
// RateLimiter, ReconciliationTimeout, ...). Logger and Registry default to the
// manager's.
func (b *Builder) WithOptions(o controller.Options) *Builder {
	b.opts, b.optsSet = o, true
	return b
}

// Complete builds the controller and adds it to the manager.
func (b *Builder) Complete(r reconcile.Reconciler) error {
	_, err := b.Build(r)
	return err
}

// Build is Complete that also returns the controller (e.g. to add sources
// later with Watch).
func (b *Builder) Build(r reconcile.Reconciler) (*controller.Controller, error) {
	if err := b.validate(r); err != nil {
		return nil, err
	}
	b.used = true
	c := b.mgr.Client()
	forGVK, err := b.fors[0].kind.gvk(c)
	if err != nil {
		return nil, fmt.Errorf("builder: For: %w", err)
	}
	name := b.name
	if name == "" {
		name = strings.ToLower(forGVK.Kind)
	}
	opts := b.opts
	if opts.Logger.GetSink() == nil {
		opts.Logger = b.mgr.Logger()
	}
	if opts.Registry == nil {
		opts.Registry = b.mgr.Registry()
	}
	if opts.TracerProvider == nil {
		opts.TracerProvider = b.mgr.TracerProvider()
	}
	ctrl, err := controller.New(name, r, opts)
	if err != nil {
		return nil, fmt.Errorf("builder: %w", err)
	}

	var errs []error
	add := func(w watch, h handler.EventHandler) {
		if _, err := w.kind.gvk(c); err != nil {
			errs = append(errs, fmt.Errorf("builder: %s: %w", w.what, err))
			return
		}
		src, err := w.kind.source(b.mgr, h, append(append([]predicate.Predicate{}, b.filters...), w.preds...))
		if err != nil {
			errs = append(errs, fmt.Errorf("builder: %s: %w", w.what, err))
			return
		}
		if err := ctrl.Watch(src); err != nil {
			errs = append(errs, fmt.Errorf("builder: %s: %w", w.what, err))
		}
	}
	add(b.fors[0], handler.EnqueueRequestForObject())
	for _, w := range b.owns {
		add(w, handler.EnqueueRequestForOwner(forGVK.GroupKind(), handler.OwnerOptions{}))
	}
	for _, w := range b.watches {
		add(w, w.h)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := b.mgr.Add(ctrl); err != nil {
		return nil, fmt.Errorf("builder: add controller %s: %w", name, err)
	}
	return ctrl, nil
}

// validate checks everything the setters recorded.
func (b *Builder) validate(r reconcile.Reconciler) error {
	var errs []error
	if b.used {
		errs = append(errs, errors.New("builder: already built; use a new Builder"))
	}
	if b.mgr == nil {
		errs = append(errs, errors.New("builder: manager is nil"))
	}
	if r == nil {
		errs = append(errs, errors.New("builder: reconciler is nil"))
	}
	switch len(b.fors) {
	case 0:
		errs = append(errs, errors.New("builder: For must be called once"))
	case 1:
	default:
		errs = append(errs, errors.New("builder: For called more than once"))
	}
	for _, w := range append(append(slices.Clone(b.fors), b.owns...), b.watches...) {
		if w.kind == nil {
			errs = append(errs, fmt.Errorf("builder: %s: kind is nil", w.what))
		}
		if w.what == "Watches" && w.h == nil {
			errs = append(errs, errors.New("builder: Watches: handler is nil"))
		}
		for _, p := range w.preds {
			if p == nil {
				errs = append(errs, fmt.Errorf("builder: %s: nil predicate", w.what))
			}
		}
	}
	for _, p := range b.filters {
		if p == nil {
			errs = append(errs, errors.New("builder: WithEventFilter: nil predicate"))
		}
	}
	if b.optsSet {
		if b.opts.MaxConcurrentReconciles < 0 {
			errs = append(errs, errors.New("builder: MaxConcurrentReconciles must not be negative"))
		}
		if b.opts.ReconciliationTimeout < 0 {
			errs = append(errs, errors.New("builder: ReconciliationTimeout must not be negative"))
		}
	}
	return errors.Join(errs...)
}
