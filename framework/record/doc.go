// Package record writes Kubernetes Events (core/v1 Event) about objects, as
// `kubectl describe` shows them.
//
// Contract:
//
//   - Recording is best effort: Event never fails the caller. Write errors are
//     logged (they do not come back), because an operator must not stop
//     reconciling because its events cannot be stored.
//   - Each call is one synchronous request bounded by the caller's ctx (and
//     at most WriteTimeout), so nothing runs after the caller returns.
//   - Repeats are aggregated: the same type, reason and message for the same
//     object within the recorder's memory (the last 4096 distinct events) patch
//     count and lastTimestamp of the existing Event instead of creating one.
//   - Events of cluster-scoped objects go to the "default" namespace.
//
// A Recorder is safe for concurrent use.
package record
