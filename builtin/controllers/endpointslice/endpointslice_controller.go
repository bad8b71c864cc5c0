package endpointslice

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
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
	Name = "endpointslice"
	// ControllerName is the value of the endpointslice.kubernetes.io/managed-by
	// label on the slices this controller manages.
	ControllerName = "endpointslice-controller.k8s.io"
	// LabelHeadless marks the slices of headless Services.
	LabelHeadless = "service.kubernetes.io/headless"
	// LabelZone is the node label giving an endpoint's zone.
	LabelZone = "topology.kubernetes.io/zone"
	// DefaultMaxEndpointsPerSlice is Kubernetes' default slice size.
	DefaultMaxEndpointsPerSlice = 100

	clusterIPNone = "None"
)

// Options configure the controller; the zero value means defaults.
type Options struct {
	// MaxEndpointsPerSlice caps the endpoints of one slice (default 100).
	MaxEndpointsPerSlice int
	// MaxConcurrentReconciles is the number of workers (default 2).
	MaxConcurrentReconciles int
}

func (o *Options) complete() {
	if o.MaxEndpointsPerSlice <= 0 {
		o.MaxEndpointsPerSlice = DefaultMaxEndpointsPerSlice
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 2
	}
}

// Setup adds the controller with default options to mgr.
func Setup(mgr *manager.Manager) error { return New(mgr, Options{}) }

// New adds the controller with opts to mgr.
func New(mgr *manager.Manager, opts Options) error {
	opts.complete()
	infs := mgr.Informers()
	services, err := cache.InformerFor(infs, cache.InformerOptions[*corev1.Service]{})
	if err != nil {
		return fmt.Errorf("endpointslice: service informer: %w", err)
	}
	pods, err := cache.InformerFor(infs, cache.InformerOptions[*corev1.Pod]{})
	if err != nil {
		return fmt.Errorf("endpointslice: pod informer: %w", err)
	}
	nodes, err := cache.InformerFor(infs, cache.InformerOptions[*corev1.Node]{})
	if err != nil {
		return fmt.Errorf("endpointslice: node informer: %w", err)
	}
	eslices, err := cache.InformerFor(infs, cache.InformerOptions[*discoveryv1.EndpointSlice]{})
	if err != nil {
		return fmt.Errorf("endpointslice: endpointslice informer: %w", err)
	}
	c := mgr.Client()
	rec := mgr.EventRecorder(ControllerName)
	r := &reconciler{
		maxPerSlice: opts.MaxEndpointsPerSlice,
		tracker:     newTracker(),
		getService: func(key client.ObjectKey) (*corev1.Service, bool) {
			return services.Store().Get(key.String())
		},
		listPods: func(ns string) []*corev1.Pod {
			out, _ := pods.Store().ByIndex(cache.NamespaceIndex, ns)
			return out
		},
		zoneOf: func(node string) (string, bool) {
			n, ok := nodes.Store().Get(node)
			if !ok {
				return "", false
			}
			z, ok := n.Labels[LabelZone]
			return z, ok
		},
		listSlices: func(ns, svc string) []*discoveryv1.EndpointSlice {
			all, _ := eslices.Store().ByIndex(cache.NamespaceIndex, ns)
			var out []*discoveryv1.EndpointSlice
			for _, s := range all {
				if s.Labels[discoveryv1.LabelServiceName] == svc && s.Labels[discoveryv1.LabelManagedBy] == ControllerName {
					out = append(out, s)
				}
			}
			return out
		},
		create: func(ctx context.Context, s *discoveryv1.EndpointSlice) error { return c.Create(ctx, s) },
		update: func(ctx context.Context, s *discoveryv1.EndpointSlice) error { return c.Update(ctx, s) },
		delete: func(ctx context.Context, s *discoveryv1.EndpointSlice) error {
			return client.IgnoreNotFound(c.Delete(ctx, s, client.Preconditions{UID: api.Ptr(s.UID)}))
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
	nodeToServices := func(ctx context.Context, obj api.Object) []reconcile.Request {
		var reqs []reconcile.Request
		for _, p := range pods.Store().List() {
			if p.Spec.NodeName == obj.GetName() {
				reqs = append(reqs, podToServices(ctx, p)...)
			}
		}
		return reqs
	}
	err = builder.ControllerManagedBy(mgr).
		Named(Name).
		For(builder.Kind[*corev1.Service]()).
		Owns(builder.Kind[*discoveryv1.EndpointSlice]()).
		Watches(builder.Kind[*corev1.Pod](), handler.EnqueueRequestsFromMapFunc(podToServices), predicate.ResourceVersionChanged()).
		Watches(builder.Kind[*corev1.Node](), handler.EnqueueRequestsFromMapFunc(nodeToServices), predicate.LabelChanged()).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("endpointslice: %w", err)
	}
	return nil
}
