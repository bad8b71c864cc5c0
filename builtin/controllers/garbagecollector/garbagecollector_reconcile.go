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

// liveObjects reads and writes the objects the collector acts on. They are
// read from the server, not from the graph: the collector deletes or changes
// an object only after a fresh read confirms its owners are gone and its uid
// is still the one the graph saw, as Kubernetes' garbage collector does.
type liveObjects interface {
	// Get reads the live object named by obj (apiVersion, kind, namespace,
	// name) into obj.
	Get(ctx context.Context, obj *api.Unstructured) error
	// Update writes obj (optimistically locked on its resourceVersion).
	Update(ctx context.Context, obj *api.Unstructured) error
	// Delete deletes obj with a propagation policy if its uid and (when set)
	// resourceVersion still match: a Conflict error otherwise.
	Delete(ctx context.Context, obj *api.Unstructured, policy string) error
	// Namespaced reports whether a kind is namespaced.
	Namespaced(ctx context.Context, gvk api.GroupVersionKind) (bool, error)
}

// recorder records events (record.Recorder).
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// reconciler acts on one object, named by its uid in Request.Name.
type reconciler struct {
	graph *graph
	// synced reports whether every monitored resource has listed (the
	// graph builder's allSynced).
	synced   interface{ allSynced() bool }
	objects  liveObjects
	recorder recorder
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
