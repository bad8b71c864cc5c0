// Package reconcile defines what a controller calls: a Reconciler receives a
// Request (the namespace and name of one object, never an event) and returns a
// Result and an error.
//
// # The retry contract
//
// This is the one place it is written down; controllers implement exactly this:
//
//   - (Result{}, nil): done. The key's backoff is reset; nothing is scheduled.
//   - (Result{RequeueAfter: d}, nil) with d > 0: done for now; the key is
//     reconciled again after d (or earlier if an event arrives). Backoff is reset.
//   - (_, err) with err non-nil and not terminal: failed; the key is requeued with
//     the controller's rate limiter (per-key exponential backoff, by default 5 ms
//     doubling up to 1000 s, combined with an overall token bucket). Result is
//     ignored. The error is logged and counted by the controller; do not log it
//     yourself.
//   - (_, TerminalError(err)): failed permanently for this state of the world; the
//     error is logged and counted but the key is not retried until a new event
//     enqueues it.
//   - An error for which errors.IsNotFound (package framework/api/errors) holds is
//     treated as success: the object it concerns is gone, and its deletion is an
//     event of its own. Wrap it in another error message only with %w so this
//     still applies; use TerminalError or a non-NotFound error to change it.
//   - A panic in Reconcile is recovered, counted (controller_runtime_reconcile_panics_total)
//     and handled like a non-terminal error.
//
// Reconcilers must be level-based and idempotent: read the current state through
// the client, never depend on which event caused the call, and expect to be
// called again for the same key at any time. One key is never reconciled by two
// workers at once; different keys are reconciled concurrently when the
// controller has several workers.
//
// The ctx passed to Reconcile carries a logr.Logger (logr.FromContextOrDiscard)
// with the keys "controller", "namespace", "name" and "reconcileID", and ends
// when the controller stops or the reconciliation timeout expires.
package reconcile
