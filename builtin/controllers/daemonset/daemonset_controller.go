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
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/controllerutil"
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
	r := &reconciler{
		now:           opts.Now,
		failedBackoff: podutil.NewBackoff(FailedPodBackoffInitial, FailedPodBackoffMax),
		expectations:  podutil.NewExpectations(opts.Now),
		reader:        mgr.Reader(),
		client:        mgr.Client(),
		revisions:     mgr.Client(),
		recorder:      mgr.EventRecorder(ControllerName),
	}
	// The pod informer's first handler meets the expectations, before the
	// builder's handler enqueues the owner.
	pods, err := cache.InformerFor(mgr.Informers(), cache.InformerOptions[*corev1.Pod]{})
	if err != nil {
		return fmt.Errorf("pod informer: %w", err)
	}
	pods.AddHandler(r.observePod)
	// Any node change may change where every DaemonSet runs.
	allDaemonSets := func(ctx context.Context, _ api.Object) []reconcile.Request {
		l := &appsv1.DaemonSetList{}
		if err := r.reader.List(ctx, l); err != nil {
			logr.FromContextOrDiscard(ctx).Error(err, "List daemonsets for a node change")
			return nil
		}
		out := make([]reconcile.Request, 0, len(l.Items))
		for i := range l.Items {
			out = append(out, reconcile.Request{ObjectKey: client.ObjectKeyFromObject(&l.Items[i])})
		}
		return out
	}
	err = builder.ControllerManagedBy(mgr).
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

// observePod meets the expectations of the DaemonSet controlling a pod: an
// added pod is a creation, a pod marked for deletion or gone a deletion. It
// runs on the informer's goroutine.
func (r *reconciler) observePod(ev cache.Event[*corev1.Pod]) {
	ref := controllerutil.GetControllerOf(ev.Object)
	if ref == nil || ref.Kind != "DaemonSet" {
		return
	}
	key := client.ObjectKey{Namespace: ev.Object.Namespace, Name: ref.Name}.String()
	switch {
	case ev.Type == cache.Deleted:
		r.expectations.DeletionObserved(key, cache.KeyOf(ev.Object))
	case ev.Object.DeletionTimestamp != nil && (ev.Old == nil || ev.Old.DeletionTimestamp == nil):
		r.expectations.DeletionObserved(key, cache.KeyOf(ev.Object))
	case ev.Type == cache.Added:
		r.expectations.CreationObserved(key)
	}
}
