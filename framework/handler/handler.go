package handler

import (
	"context"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Event is a change of one watched object, with its concrete type erased.
type Event = cache.Event[api.Object]

// Queue receives requests. A controller's work queue implements it.
type Queue interface {
	Add(req reconcile.Request)
}

// EventHandler maps an event to requests.
type EventHandler interface {
	Handle(ctx context.Context, ev Event, q Queue)
}

// Func adapts a function to an EventHandler.
type Func func(ctx context.Context, ev Event, q Queue)

var _ EventHandler = Func(nil)

// Handle calls f(ctx, ev, q).
func (f Func) Handle(ctx context.Context, ev Event, q Queue) { f(ctx, ev, q) }

// RequestFor returns the request naming obj.
func RequestFor(obj api.Object) reconcile.Request {
	return reconcile.Request{ObjectKey: client.ObjectKeyFromObject(obj)}
}

// EnqueueRequestForObject enqueues the key of the event's object.
func EnqueueRequestForObject() EventHandler {
	return Func(func(_ context.Context, ev Event, q Queue) {
		if ev.Object != nil {
			q.Add(RequestFor(ev.Object))
		}
	})
}

// MapFunc computes the requests an object's change should trigger. It is called
// for the new state and, on updates, for the old one too.
type MapFunc func(ctx context.Context, obj api.Object) []reconcile.Request

// EnqueueRequestsFromMapFunc enqueues what fn returns for the object (and for the
// old object of an update).
func EnqueueRequestsFromMapFunc(fn MapFunc) EventHandler {
	return Func(func(ctx context.Context, ev Event, q Queue) {
		for _, obj := range objects(ev) {
			for _, req := range fn(ctx, obj) {
				q.Add(req)
			}
		}
	})
}

// OwnerOptions tune EnqueueRequestForOwner.
type OwnerOptions struct {
	// AnyOwner enqueues every owner of the kind, not only the controlling one
	// (the reference with controller: true).
	AnyOwner bool
	// ClusterScopedOwner says the owner kind is cluster-scoped: requests get
	// an empty namespace.
	ClusterScopedOwner bool
}

// EnqueueRequestForOwner enqueues the owners of kind owner (group and kind; the
// version is ignored, as an owner reference may name any served version) found
// in the object's ownerReferences, by default only the controlling owner. The
// owner is assumed to live in the object's namespace unless
// opts.ClusterScopedOwner is set.
func EnqueueRequestForOwner(owner api.GroupKind, opts OwnerOptions) EventHandler {
	return Func(func(_ context.Context, ev Event, q Queue) {
		for _, obj := range objects(ev) {
			for _, ref := range obj.GetOwnerReferences() {
				if !opts.AnyOwner && (ref.Controller == nil || !*ref.Controller) {
					continue
				}
				gv, err := api.ParseGroupVersion(ref.APIVersion)
				if err != nil || gv.Group != owner.Group || ref.Kind != owner.Kind {
					continue
				}
				ns := obj.GetNamespace()
				if opts.ClusterScopedOwner {
					ns = ""
				}
				q.Add(reconcile.Request{ObjectKey: client.ObjectKey{Namespace: ns, Name: ref.Name}})
			}
		}
	})
}

// objects returns the event's object and, for an update, the old one.
func objects(ev Event) []api.Object {
	objs := make([]api.Object, 0, 2)
	if ev.Object != nil {
		objs = append(objs, ev.Object)
	}
	if ev.Type == cache.Updated && ev.Old != nil {
		objs = append(objs, ev.Old)
	}
	return objs
}
