// Package workqueue is the queue between event handlers and reconcile workers: a
// generic queue of keys, Typed[T], with delayed and rate-limited adds and optional
// Prometheus metrics.
//
// The contract, stated as properties:
//
//   - Fair: items are handed out in the order they were first added (FIFO). An item
//     added again while it is processing is queued behind the items already waiting
//     when its worker calls Done.
//   - Stingy: an item added several times before a worker gets it is handed out once.
//     Queues hold keys, not events; a worker always reads the current state.
//   - Never processed concurrently: between Get and Done an item belongs to one
//     worker. Adds in that window mark it dirty, and Done queues it again, so no
//     change is lost and no two workers ever hold the same item.
//   - Multiple producers and consumers: every method is safe for concurrent use; any
//     number of goroutines may Add and Get at once.
//   - Shutdown: after ShutDown, adds are ignored and delayed items dropped; Get keeps
//     returning queued items and then reports shutdown, so workers exit once the queue
//     is empty. ShutDownWithDrain also waits until every handed-out item is Done.
//   - Delayed adds: AddAfter adds an item when its delay elapses; while it waits, the
//     earliest requested time wins. AddRateLimited takes the delay from a RateLimiter
//     (by default the larger of a per-item exponential backoff, 5 ms doubling up to
//     1000 s, and an overall 10 qps / 100 burst token bucket); Forget resets an item's
//     backoff and NumRequeues reports it.
//   - Cheap: a warmed queue does not allocate for Add, Get and Done; without a
//     MetricsProvider it takes no timestamps. Items are spread by hash over 16
//     shards, each keeping its items' bookkeeping under its own lock, held only
//     for an index probe and a state change (items are hashed before it is
//     taken). The order is kept by one FIFO of queued items, a lock-free ring
//     with an overflow list, so Get takes no lock at all while items are
//     waiting, and many producers and consumers on few CPUs do not park on a
//     shared mutex. Without metrics Get does not even write to the item's
//     record: an item becomes processing when a Get claims its FIFO position,
//     and Add and Done read that from the FIFO under the shard's lock. Up to
//     2048 idle items keep their bookkeeping entry, so keys that come back soon
//     cost fewer index operations; an item keeps its entry while it comes and
//     goes, and entries are released oldest first beyond that number.
//     Goroutines: one per queue for the metrics gauges (only with metrics) and
//     one for delayed adds (from the first AddAfter); both end at ShutDown.
//
// A typical worker:
//
//	for {
//		key, shutdown := q.Get()
//		if shutdown {
//			return
//		}
//		if err := reconcile(ctx, key); err != nil {
//			q.AddRateLimited(key)
//		} else {
//			q.Forget(key)
//		}
//		q.Done(key)
//	}
package workqueue
