package endpoints

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/predicate"
	"github.com/converge-dev/converge/framework/reconcile"
)

const (
	// Name is the controller's name in builtin/controllers.
	Name = "endpoints"
	// LabelManagedBy marks the Endpoints objects this controller manages.
	LabelManagedBy = "endpoints.kubernetes.io/managed-by"
	// ControllerName is the value of LabelManagedBy.
	ControllerName = "endpoint-controller"
	// LabelHeadless marks the Endpoints of headless Services.
	LabelHeadless = "service.kubernetes.io/headless"
	// AnnotationOverCapacity is set to "truncated" when addresses were dropped.
	AnnotationOverCapacity = "endpoints.kubernetes.io/over-capacity"
	// MaxAddresses is the most addresses one Endpoints object carries.
	MaxAddresses = 1000

	clusterIPNone = "None"
)

// Options configure the controller; the zero value means defaults.
type Options struct {
	// MaxConcurrentReconciles is the number of workers (default 2).
	MaxConcurrentReconciles int
}

// Setup adds the controller with default options to mgr.
func Setup(mgr *manager.Manager) error { return New(mgr, Options{}) }

// New adds the controller with opts to mgr.
func New(mgr *manager.Manager, opts Options) error {
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = 2
	}
	infs := mgr.Informers()
	services, err := cache.InformerFor(infs, cache.InformerOptions[*corev1.Service]{})
	if err != nil {
		return fmt.Errorf("endpoints: service informer: %w", err)
	}
	pods, err := cache.InformerFor(infs, cache.InformerOptions[*corev1.Pod]{})
	if err != nil {
		return fmt.Errorf("endpoints: pod informer: %w", err)
	}
	eps, err := cache.InformerFor(infs, cache.InformerOptions[*corev1.Endpoints]{})
	if err != nil {
		return fmt.Errorf("endpoints: endpoints informer: %w", err)
	}
	c := mgr.Client()
	rec := mgr.EventRecorder(ControllerName)
	r := &reconciler{
		getService: func(key client.ObjectKey) (*corev1.Service, bool) { return services.Store().Get(key.String()) },
		listPods: func(ns string) []*corev1.Pod {
			out, _ := pods.Store().ByIndex(cache.NamespaceIndex, ns)
			return out
		},
		getEndpoints: func(key client.ObjectKey) (*corev1.Endpoints, bool) { return eps.Store().Get(key.String()) },
		create:       func(ctx context.Context, e *corev1.Endpoints) error { return c.Create(ctx, e) },
		update:       func(ctx context.Context, e *corev1.Endpoints) error { return c.Update(ctx, e) },
		delete: func(ctx context.Context, key client.ObjectKey) error {
			e := &corev1.Endpoints{ObjectMeta: api.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
			return client.IgnoreNotFound(c.Delete(ctx, e))
		},
		event: func(ctx context.Context, obj api.Object, typ, reason, msg string) {
			rec.Event(ctx, obj, typ, reason, msg)
		},
	}
	podToServices := func(_ context.Context, obj api.Object) []reconcile.Request {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil
		}
		svcs, _ := services.Store().ByIndex(cache.NamespaceIndex, pod.Namespace)
		var reqs []reconcile.Request
		for _, s := range svcs {
			if selects(s.Spec.Selector, pod.Labels) {
				reqs = append(reqs, handler.RequestFor(s))
			}
		}
		return reqs
	}
	err = builder.ControllerManagedBy(mgr).
		Named(Name).
		For(builder.Kind[*corev1.Service]()).
		// An Endpoints object has its Service's key: changes by others are undone.
		Watches(builder.Kind[*corev1.Endpoints](), handler.EnqueueRequestForObject()).
		Watches(builder.Kind[*corev1.Pod](), handler.EnqueueRequestsFromMapFunc(podToServices), predicate.ResourceVersionChanged()).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("endpoints: %w", err)
	}
	return nil
}
