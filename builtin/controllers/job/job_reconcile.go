package job

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/record"
)

// reader reads Jobs and pods: the manager's cache (cache.Reader). What the
// cache may not show yet of the controller's own writes is tracked by
// expectations (job_expectations.go).
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

// writer writes pods, Jobs and Job status (client.Client).
type writer interface {
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Patch(ctx context.Context, obj api.Object, patch client.Patch, opts ...client.PatchOption) error
	Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error
	Status() client.StatusWriter
}

// recorder records events (record.Recorder).
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// reconciler reconciles one Job.
type reconciler struct {
	now                     func() time.Time
	backoffBase, backoffMax time.Duration

	reader   reader
	client   writer
	recorder recorder
	expect   *expectations
}

// listPods lists the pods of namespace ns that sel selects, and the
// resourceVersion the list is current at.
func (r *reconciler) listPods(ctx context.Context, ns string, sel labels.Selector) ([]corev1.Pod, string, error) {
	l := &corev1.PodList{}
	if err := r.reader.List(ctx, l, client.InNamespace(ns), client.MatchingLabelSelector{Selector: sel}); err != nil {
		return nil, "", err
	}
	return l.Items, l.ResourceVersion, nil
}

// removeFinalizer removes the job-tracking finalizer from the pod (a pod
// already gone is no error).
func (r *reconciler) removeFinalizer(ctx context.Context, p *corev1.Pod) error {
	return r.patchPod(ctx, p, removeFinalizerPatch)
}

// addFinalizer adds it (pods created by an older controller).
func (r *reconciler) addFinalizer(ctx context.Context, p *corev1.Pod) error {
	return r.patchPod(ctx, p, addFinalizerPatch)
}

// patchPod applies a strategic merge patch to p and records the write (a pod
// already gone is no error).
func (r *reconciler) patchPod(ctx context.Context, p *corev1.Pod, patch string) error {
	target := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}
	if err := r.client.Patch(ctx, target, client.RawPatch(client.StrategicMergePatchType, []byte(patch))); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.expect.wrotePod(target, r.now())
	return nil
}

// createPod creates pod and records the write.
func (r *reconciler) createPod(ctx context.Context, pod *corev1.Pod) error {
	if err := r.client.Create(ctx, pod); err != nil {
		return err
	}
	r.expect.wrotePod(pod, r.now())
	return nil
}

// updateStatus writes job's status and records the write.
func (r *reconciler) updateStatus(ctx context.Context, job *batchv1.Job) error {
	if err := r.client.Status().Update(ctx, job); err != nil {
		return err
	}
	r.expect.wroteJob(job, r.now())
	return nil
}

// deletePod deletes p; a pod already gone is no error.
func (r *reconciler) deletePod(ctx context.Context, p *corev1.Pod) error {
	if err := r.client.Delete(ctx, p); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.expect.deletedPod(p, r.now())
	return nil
}

// deleteJob deletes j (if it is still the Job of that uid) and its pods in the
// background.
func (r *reconciler) deleteJob(ctx context.Context, j *batchv1.Job) error {
	return client.IgnoreNotFound(r.client.Delete(ctx, j, client.PropagationPolicy(api.DeletePropagationBackground),
		client.Preconditions{UID: &j.UID}))
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile drives one Job towards its spec; see the package documentation.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	job := &batchv1.Job{}
	if err := r.reader.Get(ctx, req.ObjectKey, job); err != nil {
		if apierrors.IsNotFound(err) {
			r.expect.forget(req.ObjectKey)
			return reconcile.Result{}, r.releaseOrphans(ctx, req.Namespace, req.Name, "")
		}
		return reconcile.Result{}, fmt.Errorf("get job %s: %w", req.ObjectKey, err)
	}
	if job.Spec.ManagedBy != nil && *job.Spec.ManagedBy != batchv1.JobControllerName {
		return reconcile.Result{}, nil
	}
	sel, err := labels.FromLabelSelector(job.Spec.Selector)
	if err != nil {
		return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("job %s selector: %w", req.ObjectKey, err))
	}
	all, podsRV, err := r.listPods(ctx, job.Namespace, sel)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("list pods of job %s: %w", req.ObjectKey, err)
	}
	if !r.expect.observed(job, podsRV, all, r.now()) {
		// The events of the writes still missing requeue the Job; the delay
		// only covers a write whose event this controller does not watch.
		logr.FromContextOrDiscard(ctx).V(1).Info("Waiting for the cache to show this controller's last writes")
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	pods := ownedPods(job, all)
	if job.DeletionTimestamp == nil && !isFinished(job) {
		if pods, err = r.claimPods(ctx, job, sel, all, pods); err != nil {
			return reconcile.Result{}, err
		}
	}
	if job.DeletionTimestamp != nil || isFinished(job) {
		// Nothing is counted any more: let every pod go.
		if _, err := r.removeFinalizers(ctx, withFinalizer(pods)); err != nil {
			return reconcile.Result{}, err
		}
		if job.DeletionTimestamp != nil {
			// Orphan propagation removes the pods' owner references.
			return reconcile.Result{}, r.releaseOrphans(ctx, job.Namespace, job.Name, job.UID)
		}
		return r.reconcileFinished(ctx, job)
	}
	return r.reconcileActive(ctx, job, pods)
}

// claimPods adopts the orphans among all (the pods job's selector matches)
// and releases the pods job owns that its selector no longer matches, as
// Kubernetes' Job controller (ControllerRefManager) does; it returns owned
// with the adopted pods added.
func (r *reconciler) claimPods(ctx context.Context, job *batchv1.Job, sel labels.Selector, all, owned []corev1.Pod) ([]corev1.Pod, error) {
	if sel.Empty() {
		return owned, nil
	}
	ref := controllerutil.NewControllerRef(job, batchv1.GroupVersion.WithKind("Job"))
	for i := range all {
		p := all[i]
		if controllerutil.GetControllerOf(&p) != nil || p.DeletionTimestamp != nil {
			continue
		}
		p.OwnerReferences = append(slices.Clone(p.OwnerReferences), ref)
		if err := r.setPodOwners(ctx, &p); err != nil {
			return nil, fmt.Errorf("adopt pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		owned = append(owned, p)
	}
	// A pod that stopped matching is still counted in status.active: only
	// then is the namespace listed for it (a steady reconcile lists nothing
	// more).
	if int(job.Status.Active) <= activeCount(owned) {
		return owned, nil
	}
	every, _, err := r.listPods(ctx, job.Namespace, labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list pods of namespace %s: %w", job.Namespace, err)
	}
	for i := range every {
		p := every[i]
		if c := controllerutil.GetControllerOf(&p); c == nil || c.UID != job.UID || sel.Matches(p.Labels) {
			continue
		}
		p.OwnerReferences = slices.DeleteFunc(slices.Clone(p.OwnerReferences), func(o api.OwnerReference) bool { return o.UID == job.UID })
		if err := r.setPodOwners(ctx, &p); err != nil {
			return nil, fmt.Errorf("release pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return owned, nil
}

// activeCount is how many of pods are neither finished nor being deleted.
func activeCount(pods []corev1.Pod) int {
	n := 0
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

// setPodOwners writes p's ownerReferences, failing with a Conflict if the pod
// changed since it was read (a pod already gone is no error).
func (r *reconciler) setPodOwners(ctx context.Context, p *corev1.Pod) error {
	patch, err := controllerutil.OwnerReferencesPatch(p.ResourceVersion, p.OwnerReferences)
	if err != nil {
		return err
	}
	target := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}
	if err := r.client.Patch(ctx, target, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.expect.wrotePod(target, r.now())
	return nil
}

// releaseOrphans removes the tracking finalizer from the pods of the Job
// named name that no Job counts any more: pods without a controller (orphaned
// by the garbage collector) and pods controlled by a Job of that name other
// than uid (deleted; "" when none exists). They are found by their
// batch.kubernetes.io/job-name label.
func (r *reconciler) releaseOrphans(ctx context.Context, ns, name, uid string) error {
	pods, _, err := r.listPods(ctx, ns, labels.SelectorFromSet(map[string]string{batchv1.JobNameLabel: name}))
	if err != nil {
		return fmt.Errorf("list pods of job %s/%s: %w", ns, name, err)
	}
	var orphans []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if !hasTrackingFinalizer(p) {
			continue
		}
		ref := controllerutil.GetControllerOf(p)
		if ref == nil || ref.Kind == "Job" && ref.Name == name && ref.UID != uid &&
			strings.HasPrefix(ref.APIVersion, batchv1.GroupVersion.Group+"/") {
			orphans = append(orphans, p)
		}
	}
	_, err = r.removeFinalizers(ctx, orphans)
	return err
}

func withFinalizer(pods []corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range pods {
		if hasTrackingFinalizer(&pods[i]) {
			out = append(out, &pods[i])
		}
	}
	return out
}

// trackLegacyPods adds the tracking finalizer to the running pods that lack
// it: pods created before the controller tracked pods with finalizers are
// counted from now on like the others (pods that finished before were counted
// by the older controller).
func (r *reconciler) trackLegacyPods(ctx context.Context, pods []corev1.Pod) error {
	for i := range pods {
		p := &pods[i]
		if hasTrackingFinalizer(p) || p.DeletionTimestamp != nil ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if err := r.addFinalizer(ctx, p); err != nil {
			return fmt.Errorf("add finalizer %s to pod %s/%s: %w", batchv1.JobTrackingFinalizer, p.Namespace, p.Name, err)
		}
		p.Finalizers = append(p.Finalizers, batchv1.JobTrackingFinalizer)
	}
	return nil
}

// finishingCondition is the Job's FailureTarget or SuccessCriteriaMet
// condition, or nil.
func finishingCondition(st *batchv1.JobStatus) *batchv1.JobCondition {
	if c := findCondition(st.Conditions, batchv1.JobFailureTarget); c != nil {
		return c
	}
	return findCondition(st.Conditions, batchv1.JobSuccessCriteriaMet)
}

// reconcileActive handles a Job that has not finished yet.
func (r *reconciler) reconcileActive(ctx context.Context, job *batchv1.Job, pods []corev1.Pod) (reconcile.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	now := r.now()
	old, err := deepCopy(job.Status)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("copy status of job %s/%s: %w", job.Namespace, job.Name, err)
	}
	st := &job.Status
	if err := r.trackLegacyPods(ctx, pods); err != nil {
		return reconcile.Result{}, err
	}
	// A Job starts when it is first synced unsuspended (Kubernetes sets
	// startTime before it evaluates success or failure): a Job that finishes
	// on its first sync (completions: 0) has a startTime, and the active
	// deadline counts from it. A suspended Job has none (see below).
	if st.StartTime == nil && !isSuspended(job) {
		st.StartTime = api.NewTimePtr(now)
	}
	o := r.observe(job, pods)
	finishing := finishingCondition(st)
	t := track(job, pods, finishing, o.delayed)

	var result reconcile.Result
	if finishing == nil && !isSuspended(job) {
		reason, msg, deadlineIn := r.failureReason(job, o, t, now)
		if reason != "" {
			setCondition(&st.Conditions, batchv1.JobFailureTarget, corev1.ConditionTrue, reason, msg, now)
		} else if reason, msg := successReason(job, o, t); reason != "" {
			setCondition(&st.Conditions, batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, reason, msg, now)
		} else if deadlineIn > 0 {
			result.RequeueAfter = deadlineIn
		}
		if finishing = finishingCondition(st); finishing != nil {
			// Now finishing: the running pods lose their finalizer too (and
			// count as failed when the Job fails).
			t = track(job, pods, finishing, o.delayed)
		}
	}
	mustRecord := t.record(job)
	st.Ready = api.Ptr(o.ready)
	st.Terminating = api.Ptr(int32(len(o.terminating)))
	st.Active = int32(len(o.active))

	// Finished pods are recorded in the status before their finalizer goes,
	// and counted once it went.
	if mustRecord {
		if err := r.updateStatus(ctx, job); err != nil {
			return reconcile.Result{}, fmt.Errorf("record finished pods of job %s/%s: %w", job.Namespace, job.Name, err)
		}
	}
	removed, podErr := r.removeFinalizers(ctx, t.removeFinalizer)
	countUncounted(job, pods, removed)

	switch {
	case finishing != nil:
		// Terminal: remove what still runs, then finish once nothing runs and
		// every finished pod is counted.
		deleted, deletedReady, err := r.deletePods(ctx, job, o.active, false)
		podErr = errors.Join(podErr, err)
		st.Active -= deleted
		*st.Ready -= deletedReady
		*st.Terminating += deleted
		if deleted == 0 && len(o.terminating) == 0 && uncountedEmpty(st) && podErr == nil {
			r.finish(ctx, job, now)
		}
	case isSuspended(job):
		deleted, deletedReady, err := r.deletePods(ctx, job, o.active, true)
		podErr = errors.Join(podErr, err)
		st.Active -= deleted
		*st.Ready -= deletedReady
		*st.Terminating += deleted
		if setCondition(&st.Conditions, batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", now) {
			r.recorder.Event(ctx, job, record.Normal, "Suspended", "Job suspended")
		}
		// A suspended Job has no startTime: resuming starts it afresh (above),
		// so activeDeadlineSeconds counts the time since the last resume.
		// The API server refuses to change the startTime of an unsuspended
		// Job, so it is cleared now, while the Job is suspended.
		st.StartTime = nil
	default:
		// The new startTime of a resumed Job was set above (a startTime kept
		// through the suspension, by an older controller, stays: the API
		// server refuses to replace it now).
		if c := findCondition(st.Conditions, batchv1.JobSuspended); c != nil {
			setCondition(&st.Conditions, batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", now)
			r.recorder.Event(ctx, job, record.Normal, "Resumed", "Job resumed")
		}
		after, err := r.managePods(ctx, job, o, t, now)
		podErr = errors.Join(podErr, err)
		result.RequeueAfter = minPositive(result.RequeueAfter, after)
	}
	if !api.EqualJSON(old, *st) {
		if err := r.updateStatus(ctx, job); err != nil {
			return reconcile.Result{}, fmt.Errorf("update status of job %s/%s: %w", job.Namespace, job.Name, err)
		}
		log.V(1).Info("Updated job status", "active", st.Active, "succeeded", st.Succeeded, "failed", st.Failed)
	}
	if podErr != nil {
		return reconcile.Result{}, podErr
	}
	if isFinished(job) {
		return r.reconcileFinished(ctx, job)
	}
	return result, nil
}

// finish adds the final Complete or Failed condition after FailureTarget or
// SuccessCriteriaMet.
func (r *reconciler) finish(ctx context.Context, job *batchv1.Job, now time.Time) {
	st := &job.Status
	if st.StartTime == nil {
		// A finished Job has a startTime (the API server requires it); only
		// a Job that got its finishing condition without one gets here.
		st.StartTime = api.NewTimePtr(now)
	}
	if c := findCondition(st.Conditions, batchv1.JobFailureTarget); c != nil {
		setCondition(&st.Conditions, batchv1.JobFailed, corev1.ConditionTrue, c.Reason, c.Message, now)
		r.recorder.Event(ctx, job, record.Warning, c.Reason, c.Message)
		return
	}
	c := findCondition(st.Conditions, batchv1.JobSuccessCriteriaMet)
	setCondition(&st.Conditions, batchv1.JobComplete, corev1.ConditionTrue, c.Reason, c.Message, now)
	st.CompletionTime = api.NewTimePtr(now)
	r.recorder.Event(ctx, job, record.Normal, "Completed", "Job completed")
}

// reconcileFinished deletes a finished Job once its ttlSecondsAfterFinished
// elapsed, or requeues for that moment.
func (r *reconciler) reconcileFinished(ctx context.Context, job *batchv1.Job) (reconcile.Result, error) {
	ttl := job.Spec.TTLSecondsAfterFinished
	if ttl == nil {
		return reconcile.Result{}, nil
	}
	finished := finishTime(job)
	expire := finished.Add(time.Duration(*ttl) * time.Second)
	if left := expire.Sub(r.now()); left > 0 {
		return reconcile.Result{RequeueAfter: left}, nil
	}
	if err := r.deleteJob(ctx, job); err != nil {
		return reconcile.Result{}, fmt.Errorf("delete finished job %s/%s: %w", job.Namespace, job.Name, err)
	}
	logr.FromContextOrDiscard(ctx).Info("Deleted finished job after TTL", "ttlSeconds", *ttl)
	return reconcile.Result{}, nil
}

// failureReason says whether the Job must fail now (reason and message), or
// else how long until its active deadline.
func (r *reconciler) failureReason(job *batchv1.Job, o *observed, t *tracking, now time.Time) (reason, msg string, deadlineIn time.Duration) {
	if t.failJobMessage != "" {
		return batchv1.JobReasonPodFailurePolicy, t.failJobMessage, 0
	}
	limit := int32(6)
	if job.Spec.BackoffLimit != nil {
		limit = *job.Spec.BackoffLimit
	}
	failed := job.Status.Failed + int32(len(t.newFailed))
	if u := job.Status.UncountedTerminatedPods; u != nil {
		failed += int32(len(u.Failed))
	}
	if failed > limit || pastBackoffLimitOnFailure(job, o, limit) {
		return batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit", 0
	}
	if isIndexed(job) && job.Spec.BackoffLimitPerIndex != nil {
		nFailed := t.failedIdx.Len()
		if m := job.Spec.MaxFailedIndexes; m != nil && nFailed > int(*m) {
			return batchv1.JobReasonMaxFailedIndexesExceeded, "Job has exceeded the specified maximal number of failed indexes", 0
		}
		if nFailed > 0 && nFailed+t.completed.Len() >= completions(job) {
			return batchv1.JobReasonFailedIndexes, "Job has failed indexes", 0
		}
	}
	if d := job.Spec.ActiveDeadlineSeconds; d != nil && job.Status.StartTime != nil {
		deadline := job.Status.StartTime.Add(time.Duration(*d) * time.Second)
		if !now.Before(deadline) {
			return batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline", 0
		}
		return "", "", deadline.Sub(now)
	}
	return "", "", 0
}

// pastBackoffLimitOnFailure reports whether, with restartPolicy OnFailure, the
// container restarts of the running pods reached backoffLimit.
func pastBackoffLimitOnFailure(job *batchv1.Job, o *observed, limit int32) bool {
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return false
	}
	if limit == 0 {
		return o.restarts > 0
	}
	return o.restarts >= limit
}

// successReason says whether the Job met its success criteria: a success
// policy rule (Indexed) or its completions.
func successReason(job *batchv1.Job, o *observed, t *tracking) (reason, msg string) {
	if isIndexed(job) {
		if msg, ok := matchSuccessPolicy(job.Spec.SuccessPolicy, completions(job), t.completed); ok {
			return batchv1.JobReasonSuccessPolicy, msg
		}
		if job.Spec.Completions != nil && t.completed.Len() >= completions(job) {
			return batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods"
		}
		return "", ""
	}
	succeeded := job.Status.Succeeded + int32(len(t.newSucceeded))
	if u := job.Status.UncountedTerminatedPods; u != nil {
		succeeded += int32(len(u.Succeeded))
	}
	if job.Spec.Completions == nil {
		// Work-queue Jobs: done once one pod succeeded and none runs.
		if succeeded > 0 && len(o.active) == 0 {
			return batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods"
		}
		return "", ""
	}
	if succeeded >= *job.Spec.Completions {
		return batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods"
	}
	return "", ""
}

func minPositive(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	default:
		return min(a, b)
	}
}
