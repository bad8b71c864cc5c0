package daemonset

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
)

// ControllerName is the controller's name (also the event source component).
const ControllerName = "daemonset-controller"

// The deletion of failed daemon pods on a node backs off from
// FailedPodBackoffInitial doubling to FailedPodBackoffMax, like Kubernetes (a
// node that keeps failing its daemon pod must not make the controller spin).
const (
	FailedPodBackoffInitial = time.Second
	FailedPodBackoffMax     = 15 * time.Minute
)

// Options configure the controller. The zero value means defaults.
type Options struct {
	// Now returns the current time (default time.Now).
	Now func() time.Time
	// MaxConcurrentReconciles is the number of workers (default 2).
	MaxConcurrentReconciles int
}

// Setup adds the DaemonSet controller with default options to mgr.
func Setup(mgr *manager.Manager) error { return New(mgr, Options{}) }

// New adds the DaemonSet controller with opts to mgr.
func New(mgr *manager.Manager, opts Options) error {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = 2
	}
	c := mgr.Client()
	rec := mgr.EventRecorder(ControllerName)
	r := &reconciler{
		now:           opts.Now,
		failedBackoff: podutil.NewBackoff(FailedPodBackoffInitial, FailedPodBackoffMax),
		getDaemonSet: func(ctx context.Context, key client.ObjectKey) (*appsv1.DaemonSet, error) {
			ds := &appsv1.DaemonSet{}
			if err := c.Get(ctx, key, ds); err != nil {
				return nil, err
			}
			return ds, nil
		},
		listNodes: func(ctx context.Context) ([]corev1.Node, error) {
			l := &corev1.NodeList{}
			if err := c.List(ctx, l); err != nil {
				return nil, err
			}
			return l.Items, nil
		},
		listPods: func(ctx context.Context, ns string, sel labels.Selector) ([]corev1.Pod, error) {
			l := &corev1.PodList{}
			if err := c.List(ctx, l, client.InNamespace(ns), client.MatchingLabelSelector{Selector: sel}); err != nil {
				return nil, err
			}
			return l.Items, nil
		},
		listRevisions: func(ctx context.Context, ns string) ([]appsv1.ControllerRevision, error) {
			l := &appsv1.ControllerRevisionList{}
			if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
				return nil, err
			}
			return l.Items, nil
		},
		createRevision: func(ctx context.Context, cr *appsv1.ControllerRevision) error { return c.Create(ctx, cr) },
		updateRevision: func(ctx context.Context, cr *appsv1.ControllerRevision) error { return c.Update(ctx, cr) },
		deleteRevision: func(ctx context.Context, cr *appsv1.ControllerRevision) error {
			return client.IgnoreNotFound(c.Delete(ctx, cr))
		},
		createPod: func(ctx context.Context, p *corev1.Pod) error { return c.Create(ctx, p) },
		deletePod: func(ctx context.Context, p *corev1.Pod) error {
			return client.IgnoreNotFound(c.Delete(ctx, p, client.Preconditions{UID: &p.UID}))
		},
		updateStatus: func(ctx context.Context, ds *appsv1.DaemonSet) error { return c.Status().Update(ctx, ds) },
		event: func(ctx context.Context, obj api.Object, typ, reason, msg string) {
			rec.Event(ctx, obj, typ, reason, msg)
		},
	}
	// Any node change may change where every DaemonSet runs.
	allDaemonSets := func(ctx context.Context, _ api.Object) []reconcile.Request {
		l := &appsv1.DaemonSetList{}
		if err := c.List(ctx, l); err != nil {
			logr.FromContextOrDiscard(ctx).Error(err, "List daemonsets for a node change")
			return nil
		}
		out := make([]reconcile.Request, 0, len(l.Items))
		for i := range l.Items {
			out = append(out, reconcile.Request{ObjectKey: client.ObjectKeyFromObject(&l.Items[i])})
		}
		return out
	}
	err := builder.ControllerManagedBy(mgr).
		Named("daemonset").
		For(builder.Kind[*appsv1.DaemonSet]()).
		Owns(builder.Kind[*corev1.Pod]()).
		Owns(builder.Kind[*appsv1.ControllerRevision]()).
		Watches(builder.Kind[*corev1.Node](), handler.EnqueueRequestsFromMapFunc(allDaemonSets)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, Logger: mgr.Logger()}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("build daemonset controller: %w", err)
	}
	return nil
}
