package job

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/record"
)

// reconciler reconciles one Job. Its dependencies are functions so unit tests
// stub them instead of faking a client.
type reconciler struct {
	now                     func() time.Time
	backoffBase, backoffMax time.Duration

	getJob       func(ctx context.Context, key client.ObjectKey) (*batchv1.Job, error)
	listPods     func(ctx context.Context, ns string, sel labels.Selector) ([]corev1.Pod, error)
	createPod    func(ctx context.Context, p *corev1.Pod) error
	deletePod    func(ctx context.Context, p *corev1.Pod) error
	updateStatus func(ctx context.Context, j *batchv1.Job) error
	deleteJob    func(ctx context.Context, j *batchv1.Job) error
	event        func(ctx context.Context, obj api.Object, typ, reason, msg string)
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile drives one Job towards its spec; see the package documentation.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	job, err := r.getJob(ctx, req.ObjectKey)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("get job %s: %w", req.ObjectKey, err)
	}
	if job.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	if job.Spec.ManagedBy != nil && *job.Spec.ManagedBy != batchv1.JobControllerName {
		return reconcile.Result{}, nil
	}
	if isFinished(job) {
		return r.reconcileFinished(ctx, job)
	}
	sel, err := labels.FromLabelSelector(job.Spec.Selector)
	if err != nil {
		return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("job %s selector: %w", req.ObjectKey, err))
	}
	all, err := r.listPods(ctx, job.Namespace, sel)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("list pods of job %s: %w", req.ObjectKey, err)
	}
	return r.reconcileActive(ctx, job, ownedPods(job, all))
}

// reconcileActive handles a Job that has not finished yet.
func (r *reconciler) reconcileActive(ctx context.Context, job *batchv1.Job, pods []corev1.Pod) (reconcile.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	now := r.now()
	old := job.Status
	st := &job.Status
	st.Conditions = append([]batchv1.JobCondition(nil), old.Conditions...)
	o := r.observe(job, pods)

	st.Succeeded = max(old.Succeeded, o.succeeded)
	if isIndexed(job) {
		st.CompletedIndexes = o.completed.String()
		st.Succeeded = max(st.Succeeded, int32(o.completed.Len()))
	}
	st.Failed = max(old.Failed, o.failed)
	st.Ready = api.Ptr(o.ready)
	st.Terminating = api.Ptr(int32(len(o.terminating)))
	st.Active = int32(len(o.active))

	var result reconcile.Result
	failTarget := findCondition(st.Conditions, batchv1.JobFailureTarget)
	successTarget := findCondition(st.Conditions, batchv1.JobSuccessCriteriaMet)
	if failTarget == nil && successTarget == nil && !isSuspended(job) {
		reason, msg, deadlineIn := r.failureReason(job, o, now)
		switch {
		case reason != "":
			setCondition(&st.Conditions, batchv1.JobFailureTarget, corev1.ConditionTrue, reason, msg, now)
		case successReached(job, st, o):
			setCondition(&st.Conditions, batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue,
				batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods", now)
		case deadlineIn > 0:
			result.RequeueAfter = deadlineIn
		}
		failTarget = findCondition(st.Conditions, batchv1.JobFailureTarget)
		successTarget = findCondition(st.Conditions, batchv1.JobSuccessCriteriaMet)
	}

	switch {
	case failTarget != nil || successTarget != nil:
		// Terminal: remove what still runs, then finish once nothing runs.
		deleted, err := r.deletePods(ctx, job, o.active)
		if err != nil {
			return reconcile.Result{}, err
		}
		st.Active = 0
		if failTarget != nil {
			st.Failed += deleted
		}
		if len(o.terminating) == 0 {
			r.finish(ctx, job, failTarget, successTarget, now)
		}
	case isSuspended(job):
		if _, err := r.deletePods(ctx, job, o.active); err != nil {
			return reconcile.Result{}, err
		}
		st.Active = 0
		if setCondition(&st.Conditions, batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", now) {
			r.event(ctx, job, record.Normal, "Suspended", "Job suspended")
		}
	default:
		if c := findCondition(st.Conditions, batchv1.JobSuspended); c != nil && c.Status == corev1.ConditionTrue {
			setCondition(&st.Conditions, batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", now)
			r.event(ctx, job, record.Normal, "Resumed", "Job resumed")
			st.StartTime = nil
		}
		if st.StartTime == nil {
			st.StartTime = api.NewTimePtr(now)
			if d := job.Spec.ActiveDeadlineSeconds; d != nil {
				result.RequeueAfter = time.Duration(*d) * time.Second
			}
		}
		after, err := r.managePods(ctx, job, o, now)
		if err != nil {
			return reconcile.Result{}, err
		}
		result.RequeueAfter = minPositive(result.RequeueAfter, after)
	}

	if !statusEqual(old, *st) {
		if err := r.updateStatus(ctx, job); err != nil {
			return reconcile.Result{}, fmt.Errorf("update status of job %s/%s: %w", job.Namespace, job.Name, err)
		}
		log.V(1).Info("Updated job status", "active", st.Active, "succeeded", st.Succeeded, "failed", st.Failed)
	}
	if isFinished(job) {
		return r.reconcileFinished(ctx, job)
	}
	return result, nil
}

// finish adds the final Complete or Failed condition.
func (r *reconciler) finish(ctx context.Context, job *batchv1.Job, failTarget, successTarget *batchv1.JobCondition, now time.Time) {
	st := &job.Status
	if failTarget != nil {
		setCondition(&st.Conditions, batchv1.JobFailed, corev1.ConditionTrue, failTarget.Reason, failTarget.Message, now)
		r.event(ctx, job, record.Warning, failTarget.Reason, failTarget.Message)
		return
	}
	setCondition(&st.Conditions, batchv1.JobComplete, corev1.ConditionTrue, successTarget.Reason, successTarget.Message, now)
	st.CompletionTime = api.NewTimePtr(now)
	r.event(ctx, job, record.Normal, "Completed", "Job completed")
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
func (r *reconciler) failureReason(job *batchv1.Job, o *observed, now time.Time) (reason, msg string, deadlineIn time.Duration) {
	if o.failJobMessage != "" {
		return batchv1.JobReasonPodFailurePolicy, o.failJobMessage, 0
	}
	limit := int32(6)
	if job.Spec.BackoffLimit != nil {
		limit = *job.Spec.BackoffLimit
	}
	if max(job.Status.Failed, o.failed) > limit {
		return batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit", 0
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

// successReached reports whether the Job met its completions.
func successReached(job *batchv1.Job, st *batchv1.JobStatus, o *observed) bool {
	if isIndexed(job) {
		return job.Spec.Completions != nil && int32(o.completed.Len()) >= *job.Spec.Completions
	}
	if job.Spec.Completions == nil {
		// Work-queue Jobs: done once one pod succeeded and none runs.
		return st.Succeeded > 0 && len(o.active) == 0
	}
	return st.Succeeded >= *job.Spec.Completions
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
