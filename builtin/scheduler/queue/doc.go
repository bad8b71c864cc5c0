// Package queue is the scheduler's priority queue of pending pods, after
// kube-scheduler's: three sub-queues and a nominator.
//
//   - activeQ holds pods ready to be tried, ordered by spec.priority (highest
//     first), then creation time, then name. Pop blocks until one is there.
//   - backoffQ holds pods that failed recently; a pod waits
//     InitialBackoff·2^(attempts-1), at most MaxBackoff, before returning to
//     activeQ.
//   - unschedulable parks pods that no node fits. A cluster event
//     (MoveAllToActiveOrBackoffQueue) moves them back when it may help: when
//     one of the plugins that rejected the pod registered the event
//     (plugin.EnqueueExtensions) and its hint does not say QueueSkip, or when
//     the rejecting plugins registered nothing. Pods parked longer than
//     MaxUnschedulableDuration are moved back regardless. Pods held by a
//     PreEnqueue plugin (schedulingGates) are parked as gated and only leave
//     when an update to the pod passes PreEnqueue.
//
// Events that arrive while a pod is being scheduled are not lost: a pod whose
// cycle started before the last move request goes to backoffQ instead of
// being parked.
//
// All methods are safe for concurrent use; Run drives the timers.
package queue
