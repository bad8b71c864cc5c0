package resourcequota

import (
	"context"
	"fmt"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/restmapper"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/predicate"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Name is the controller's name.
const Name = "resourcequota"

// DefaultResyncPeriod is kube-controller-manager's resource-quota-sync-period.
const DefaultResyncPeriod = 5 * time.Minute

// Options configure the controller; the zero value means defaults.
type Options struct {
	// ResyncPeriod is the time between two recalculations of a quota
	// (default 5m).
	ResyncPeriod time.Duration
}

func (o *Options) complete() {
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = DefaultResyncPeriod
	}
}

// Setup adds the controller to mgr with default options.
func Setup(mgr *manager.Manager) error { return New(mgr, Options{}) }

// New adds the controller to mgr.
func New(mgr *manager.Manager, opts Options) error {
	opts.complete()
	c := mgr.Client()
	mons := &monitors{c: c, mapper: restmapper.New(c.REST(), restmapper.Options{})}
	r := &reconciler{reader: mgr.Reader(), client: c, monitors: mons, opts: opts}
	mons.quotasOf = r.quotasOf
	toQuotas := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj api.Object) []reconcile.Request {
		return r.quotasOf(ctx, obj.GetNamespace())
	})
	ctrl, err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(builder.Kind[*corev1.ResourceQuota](), predicate.New(quotaChanged)).
		Watches(builder.Kind[*corev1.Pod](), toQuotas, predicate.New(podReleases)).
		Watches(builder.Kind[*corev1.Service](), toQuotas, predicate.New(serviceReleases)).
		Watches(builder.Kind[*corev1.PersistentVolumeClaim](), toQuotas, predicate.New(claimReleases)).
		Watches(builder.Kind[*corev1.ConfigMap](), toQuotas, predicate.New(deleted[*corev1.ConfigMap])).
		Watches(builder.Kind[*corev1.Secret](), toQuotas, predicate.New(deleted[*corev1.Secret])).
		// A deleted quota releases the resourcequotas count of the others.
		Watches(builder.Kind[*corev1.ResourceQuota](), toQuotas, predicate.New(deleted[*corev1.ResourceQuota])).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Build(r)
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	if err := ctrl.Watch(mons); err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	return nil
}

// quotasOf returns a request for every quota of namespace.
func (r *reconciler) quotasOf(ctx context.Context, namespace string) []reconcile.Request {
	l := &corev1.ResourceQuotaList{}
	if err := r.reader.List(ctx, l, client.InNamespace(namespace)); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, reconcile.Request{ObjectKey: client.ObjectKeyFromObject(&l.Items[i])})
	}
	return out
}

// quotaChanged passes new and deleted quotas, spec changes, and status
// writes that leave status.hard different from spec.hard or drop usage.
func quotaChanged(ev cache.Event[*corev1.ResourceQuota]) bool {
	if ev.Type != cache.Updated {
		return true
	}
	return !needsNoSync(ev.Object) || !quotaEqual(ev.Old.Spec.Hard, ev.Object.Spec.Hard)
}

// needsNoSync reports whether q's status covers its spec: status.hard equals
// spec.hard and every hard resource has a used value.
func needsNoSync(q *corev1.ResourceQuota) bool {
	if !quotaEqual(q.Spec.Hard, q.Status.Hard) {
		return false
	}
	for k := range q.Status.Hard {
		if _, ok := q.Status.Used[k]; !ok {
			return false
		}
	}
	return true
}

func deleted[T api.Object](ev cache.Event[T]) bool { return ev.Type == cache.Deleted }

// podReleases passes deletions and updates that release compute usage or
// move a pod between scopes.
func podReleases(ev cache.Event[*corev1.Pod]) bool {
	switch ev.Type {
	case cache.Deleted:
		return true
	case cache.Updated:
		terminal := func(p *corev1.Pod) bool {
			return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		}
		return terminal(ev.Object) != terminal(ev.Old) ||
			(ev.Object.DeletionTimestamp != nil) != (ev.Old.DeletionTimestamp != nil) ||
			(ev.Object.Spec.ActiveDeadlineSeconds == nil) != (ev.Old.Spec.ActiveDeadlineSeconds == nil)
	}
	return false
}

// serviceReleases passes deletions and type changes.
func serviceReleases(ev cache.Event[*corev1.Service]) bool {
	switch ev.Type {
	case cache.Deleted:
		return true
	case cache.Updated:
		return ev.Object.Spec.Type != ev.Old.Spec.Type || len(ev.Object.Spec.Ports) != len(ev.Old.Spec.Ports)
	}
	return false
}

// claimReleases passes deletions and storage request changes.
func claimReleases(ev cache.Event[*corev1.PersistentVolumeClaim]) bool {
	switch ev.Type {
	case cache.Deleted:
		return true
	case cache.Updated:
		storage := string(corev1.ResourceStorage)
		return ev.Object.Spec.Resources.Requests[storage].Cmp(ev.Old.Spec.Resources.Requests[storage]) != 0 ||
			ev.Object.Status.AllocatedResources[storage].Cmp(ev.Old.Status.AllocatedResources[storage]) != 0
	}
	return false
}
