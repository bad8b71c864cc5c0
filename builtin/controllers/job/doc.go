// Package job is the built-in Job controller (kube-controller-manager's job
// controller semantics, our own implementation).
//
// For every Job it keeps min(parallelism, remaining completions) pods running,
// created with generateName "<job>-" ("<job>-<index>-" in Indexed mode), the
// template's labels (the server already added batch.kubernetes.io/job-name and
// batch.kubernetes.io/controller-uid) and a controller ownerReference. Indexed
// pods carry the batch.kubernetes.io/job-completion-index annotation and label
// and a JOB_COMPLETION_INDEX env var in every container.
//
// Failure handling: failed pods count against backoffLimit unless a
// podFailurePolicy rule says otherwise (Ignore: not counted; FailJob: the Job
// fails at once; Count: counted). Replacement pods after failures wait an
// exponential backoff (Options.BackoffBase doubling per consecutive failure,
// capped at Options.BackoffMax; 10 s and 6 min by default).
// activeDeadlineSeconds fails the Job with reason DeadlineExceeded.
//
// Terminal conditions follow Kubernetes 1.31+: the controller first adds
// FailureTarget (or SuccessCriteriaMet), deletes the remaining active pods, and
// only when none is left adds Failed (or Complete) and completionTime. Suspend
// deletes active pods and sets the Suspended condition; resuming resets
// startTime. ttlSecondsAfterFinished deletes the finished Job (background
// propagation) once the TTL elapsed.
//
// Counting: the controller derives succeeded/failed from the Job's pods and
// never lets the counters go down (completedIndexes is a union), so terminated
// pods deleted by a user keep their past contribution. It does not use the
// batch.kubernetes.io/job-tracking pod finalizer yet; a pod that finishes and is
// deleted between two reconciles may therefore be missed.
//
// The reconciler is level-based: every decision comes from the Job and its
// pods as they are now, never from the event that triggered it.
package job
