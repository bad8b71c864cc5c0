package garbagecollector

import (
	"context"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Event reasons.
const (
	reasonOwnerRefInvalidNamespace = "OwnerRefInvalidNamespace"
	reasonOwnerRefUnresolvable     = "OwnerRefUnresolvable"
	reasonFailedDelete             = "FailedDelete"
	reasonFailedOrphan             = "FailedOrphan"
	reasonFailedUpdateOwnerRefs    = "FailedUpdateOwnerReferences"
	reasonFailedRemoveFinalizer    = "FailedRemoveFinalizer"
)

// notSyncedDelay and waitingDelay are safety-net requeues; normally graph
// events enqueue the affected uids.
const (
	notSyncedDelay = time.Second
	waitingDelay   = 10 * time.Second
)

// reconciler acts on one object, named by its uid in Request.Name. Its
// dependencies are functions so tests can stub them.
type reconciler struct {
	graph *graph
	// synced reports whether every monitored resource has listed.
	synced func() bool
	// namespaced reports whether a kind is namespaced.
	namespaced func(ctx context.Context, gvk api.GroupVersionKind) (bool, error)
	// get reads the live object named by obj (apiVersion, kind, namespace, name).
	get func(ctx context.Context, obj *api.Unstructured) error
	// update writes obj (optimistically locked on its resourceVersion).
	update func(ctx context.Context, obj *api.Unstructured) error
	// delete deletes obj with a propagation policy if its uid and (when set)
	// resourceVersion still match: a Conflict error otherwise.
	delete func(ctx context.Context, obj *api.Unstructured, policy string) error
	// event records an Event about obj.
	event func(ctx context.Context, obj api.Object, eventType, reason, message string)
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile decides from the graph's current state of the object what, if
// anything, it needs: orphaning or foreground deletion of its dependents when
// it is being deleted, otherwise collection when its owners are gone.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	n, ok := r.graph.get(req.Name)
	if !ok {
		return reconcile.Result{}, nil
	}
	switch {
	case n.orphaning():
		return r.reconcileOrphan(ctx, n)
	case n.waitingForDependents():
		return r.reconcileForeground(ctx, n)
	case n.Deleting:
		return reconcile.Result{}, nil
	case len(n.Owners) > 0:
		return reconcile.Result{}, r.reconcileOwners(ctx, n)
	}
	return reconcile.Result{}, nil
}
