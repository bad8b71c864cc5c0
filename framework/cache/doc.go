// Package cache keeps local, indexed copies of API objects in step with the
// server and turns changes into typed events.
//
// A Reflector lists a collection (resourceVersion "0" for a fresh store, so the
// server may answer from its cache) and then watches from the list's
// resourceVersion with bookmarks. A watch that ends is resumed from the last
// resourceVersion seen (an event's or a bookmark's; bookmarks only advance the
// resourceVersion). A 410 Gone/Expired answer makes it relist consistently
// (resourceVersion "") and compare the result with the Store: new objects
// become Added, objects with another resourceVersion Updated, missing objects
// Deleted. Other errors are retried with exponential backoff (100ms doubling
// to 10s by default). There is no DeltaFIFO, no tombstone and no periodic
// resync.
//
// An Informer[T] runs one Reflector, owns its Store[T] and calls handlers with
// Event[T]{Type, Object, Old}. SharedInformers hands out one informer (one
// watch) per kind and process; InformerFor creates it on first use, Stop ends
// one kind's informer (e.g. when its CRD goes away). A Reader serves the Get and
// List calls of client.Client from those informers (copies of the cached
// objects, after the first sync), so that controllers read from the cache and
// write through the client; a Lister[T] makes the same reads without copies,
// for hot paths that must not modify what they read. IndexField indexes a
// field (e.g. a pod's spec.nodeName) so that both answer an equality field
// selector on it from the index.
//
// # Consistency contract
//
//   - Eventual: once the server stops changing and the informer is connected,
//     the Store equals the server's collection (after Transform, within the
//     namespace and selectors).
//   - Per object: the states a handler receives for one key are a subsequence,
//     in order, of the states the server went through; intermediate states may
//     be skipped (e.g. across a relist). A key's events always follow
//     Added → Updated* → Deleted, then possibly Added again.
//   - Deletes carry the last known object: the final state sent by the watch,
//     or, when the delete was inferred by a relist, the last state cached. An
//     object that was created and deleted during a watch gap yields no event.
//   - No cross-object ordering: events for different keys may be delivered in
//     an order other than the server's, and a relist delivers its events in
//     key order.
//   - When a handler runs, the Store already holds the change; readers on
//     other goroutines may see a change slightly before handlers do.
//   - Handlers of one informer run one at a time, in the order they were
//     added, on the goroutine that called Informer.Start; a handler added late
//     first receives Added for every cached object.
//   - Objects in the Store and in events are shared: never modify them.
package cache
