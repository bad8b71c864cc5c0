// Package job is the built-in Job controller (kube-controller-manager's job
// controller semantics, our own implementation).
//
// For every Job it keeps min(parallelism, remaining completions) pods running,
// created with generateName "<job>-" ("<job>-<index>-" in Indexed mode), the
// template's labels (the server already added batch.kubernetes.io/job-name and
// batch.kubernetes.io/controller-uid) and a controller ownerReference. Indexed
// pods carry the batch.kubernetes.io/job-completion-index annotation and label
// and a JOB_COMPLETION_INDEX env var in every container; their host name is
// "<job>-<index>". Like Kubernetes' ControllerRefManager, an active Job adopts
// orphan pods its selector matches and releases pods it owns that no longer
// match (looked for only while status.active counts more pods than it owns).
//
// Failure handling: failed pods count against backoffLimit unless a
// podFailurePolicy rule says otherwise (Ignore: not counted; FailJob: the Job
// fails at once; FailIndex: the pod's index fails; Count: counted). A pod being
// deleted before it finished counts as failed, unless podReplacementPolicy is
// Failed (then only phase Failed counts; a pod no node runs counts at once, as
// Kubernetes' pod GC would mark it Failed); with TerminatingOrFailed
// (the default) a replacement is created as soon as a pod is terminating, with
// Failed only once it is gone. Replacement pods after failures wait an
// exponential backoff (Options.BackoffBase doubling per consecutive failure,
// capped at Options.BackoffMax; 10 s and 6 min by default).
// activeDeadlineSeconds fails the Job with reason DeadlineExceeded; with
// restartPolicy OnFailure, container restarts count against backoffLimit.
//
// Indexed Jobs with backoffLimitPerIndex count failures per index in the
// batch.kubernetes.io/job-index-failure-count (and ...-ignored-failure-count)
// annotation of each replacement pod, back off per index, add an index to
// status.failedIndexes once its failures exceed the limit (or a FailIndex rule
// matched), fail with MaxFailedIndexesExceeded beyond maxFailedIndexes, and
// with FailedIndexes when every index completed or failed. The finalizer of the
// last failed pod of an index stays until its replacement exists, so the count
// survives the pod's deletion.
//
// Success: a successPolicy rule (Indexed Jobs: all of succeededIndexes, or
// succeededCount of them or of all indexes) adds SuccessCriteriaMet with reason
// SuccessPolicy ("Matched rules at index N"); reaching completions adds it with
// CompletionsReached.
//
// Terminal conditions follow Kubernetes 1.31+: the controller first adds
// FailureTarget (or SuccessCriteriaMet), deletes the remaining active pods, and
// only when none is left and every finished pod is counted adds Failed (or
// Complete) and completionTime. Pods deleted because the Job fails count as
// failed. startTime is set on the first unsuspended sync, before success or
// failure is judged. Suspend deletes active pods (not counted), sets the
// Suspended condition and clears startTime; resuming sets a new one.
// status.ready counts the ready pods among the active ones left, so pods the
// controller deletes leave it with status.active. ttlSecondsAfterFinished
// deletes the finished Job (background propagation) once the TTL elapsed.
//
// Counting uses the batch.kubernetes.io/job-tracking finalizer, put on every
// pod the controller creates (see job_tracking.go): a finished pod is first
// recorded in status.uncountedTerminatedPods (Indexed successes directly in
// completedIndexes), then loses its finalizer, then is moved into
// status.succeeded or status.failed. A finished pod deleted at once is thus
// still counted, and a controller restart between the steps counts it once.
// The pods of a finished Job, of a deleted one and pods the garbage collector
// orphaned (found by their batch.kubernetes.io/job-name label) lose the
// finalizer without being counted. Running pods without the finalizer (created by an older
// controller) get it.
//
// The reconciler is level-based: every decision comes from the Job and its
// pods as they are now, never from the event that triggered it. It reads
// them from the manager's cache; a Job whose cached state does not show this
// controller's own last writes yet (a status write, a pod created, patched or
// deleted) waits until it does (job_expectations.go), so that a stale cache
// never counts a pod twice or creates one too many.
package job
