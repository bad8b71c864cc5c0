// Package controller runs a reconcile.Reconciler: sources feed keys into a
// rate-limited work queue (package workqueue) and a pool of workers calls
// Reconcile for each key, applying the retry contract of package reconcile.
//
// Contract:
//
//   - One key is never reconciled by two workers at once; up to
//     MaxConcurrentReconciles different keys are reconciled concurrently.
//   - Start registers the sources, waits until every source that can sync has
//     synced (CacheSyncTimeout), starts the workers and blocks until ctx ends; it
//     then stops taking keys and waits for running reconciles, whose ctx has
//     ended, to return.
//   - Every reconcile gets a fresh reconcileID (a UUID) and a ctx carrying a
//     logr.Logger with "controller", "namespace", "name" and "reconcileID", and
//     ends after ReconciliationTimeout when one is set.
//   - Panics in Reconcile are recovered, logged with their stack, counted and
//     retried with backoff like errors.
//   - Metrics, when a registry is given, use controller-runtime's names:
//     controller_runtime_reconcile_total{controller,result} (result: success,
//     error, requeue_after), controller_runtime_reconcile_errors_total,
//     controller_runtime_terminal_reconcile_errors_total,
//     controller_runtime_reconcile_panics_total,
//     controller_runtime_reconcile_time_seconds, controller_runtime_active_workers,
//     controller_runtime_max_concurrent_reconciles, and the queue's workqueue_*
//     metrics with name=<controller>.
//
// A Source is anything that adds keys to the queue; Kind adapts a typed
// informer, an event handler and predicates into one. Most users build
// controllers with package builder instead of calling New and Watch.
package controller
