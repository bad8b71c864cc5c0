package endpointslice

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
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
	// Nodes are read for their zone; pods are listed by node.
	if _, err := cache.InformerFor(mgr.Informers(), cache.InformerOptions[*corev1.Node]{}); err != nil {
		return fmt.Errorf("endpointslice: node informer: %w", err)
	}
	if err := podutil.IndexByNode(mgr.Informers()); err != nil {
		return fmt.Errorf("endpointslice: %w", err)
	}
	rd := mgr.Reader()
	r := &reconciler{
		maxPerSlice: opts.MaxEndpointsPerSlice,
		tracker:     newTracker(),
		reader:      rd,
		client:      mgr.Client(),
		recorder:    mgr.EventRecorder(ControllerName),
	}
	servicesOf := func(ctx context.Context, pods ...corev1.Pod) []reconcile.Request {
		var reqs []reconcile.Request
		svcs := map[string]*corev1.ServiceList{} // per namespace
		for _, pod := range pods {
			l, ok := svcs[pod.Namespace]
			if !ok {
				l = &corev1.ServiceList{}
				if err := rd.List(ctx, l, client.InNamespace(pod.Namespace)); err != nil {
					logr.FromContextOrDiscard(ctx).Error(err, "List services for a pod or node change")
					return reqs
				}
				svcs[pod.Namespace] = l
			}
			for i := range l.Items {
				if selects(l.Items[i].Spec.Selector, pod.Labels) {
					reqs = append(reqs, handler.RequestFor(&l.Items[i]))
				}
			}
		}
		return reqs
	}
	podToServices := func(ctx context.Context, obj api.Object) []reconcile.Request {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil
		}
		return servicesOf(ctx, *pod)
	}
	nodeToServices := func(ctx context.Context, obj api.Object) []reconcile.Request {
		pods := &corev1.PodList{}
		if err := rd.List(ctx, pods, client.MatchingFields{podutil.NodeNameField: obj.GetName()}); err != nil {
			logr.FromContextOrDiscard(ctx).Error(err, "List pods for a node change")
			return nil
		}
		return servicesOf(ctx, pods.Items...)
	}
	err := builder.ControllerManagedBy(mgr).
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
