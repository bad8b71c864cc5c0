// Package handler turns cache events into reconcile requests.
//
// An EventHandler receives every event of one watched kind (after predicates) and
// adds zero or more reconcile.Requests to a Queue. Handlers only compute keys:
// they run on the informer's delivery goroutine, so they must be fast, must not
// block and must not call the API server. The queue collapses duplicate keys, so
// enqueueing too much is cheap while enqueueing too little loses work.
//
// Provided handlers:
//
//   - EnqueueRequestForObject: the object's own key (For).
//   - EnqueueRequestForOwner: the key of the owner of a given kind, from the
//     object's ownerReferences (Owns). For updates, owners of both the old and
//     the new state are enqueued, so a child moved to another owner wakes both.
//   - EnqueueRequestsFromMapFunc: any keys computed by a MapFunc (Watches).
//
// Events are cache.Event[api.Object]: Deleted events carry the last known object,
// Old is set for Updated only. Objects are shared with the cache: never modify them.
package handler
