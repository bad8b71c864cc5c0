package endpoints

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"

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
	// Endpoints are read, not only watched; the builder adds the rest.
	if _, err := cache.InformerFor(mgr.Informers(), cache.InformerOptions[*corev1.Endpoints]{}); err != nil {
		return fmt.Errorf("endpoints: endpoints informer: %w", err)
	}
	r := &reconciler{reader: mgr.Reader(), client: mgr.Client(), recorder: mgr.EventRecorder(ControllerName)}
	podToServices := func(ctx context.Context, obj api.Object) []reconcile.Request {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil
		}
		svcs := &corev1.ServiceList{}
		if err := r.reader.List(ctx, svcs, client.InNamespace(pod.Namespace)); err != nil {
			logr.FromContextOrDiscard(ctx).Error(err, "List services for a pod change")
			return nil
		}
		var reqs []reconcile.Request
		for i := range svcs.Items {
			if selects(svcs.Items[i].Spec.Selector, pod.Labels) {
				reqs = append(reqs, handler.RequestFor(&svcs.Items[i]))
			}
		}
		return reqs
	}
	err := builder.ControllerManagedBy(mgr).
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
