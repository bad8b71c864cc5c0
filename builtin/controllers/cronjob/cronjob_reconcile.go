package cronjob

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/go-logr/logr"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/record"
)

// nextSlack is added to requeues at schedule times so the clock has passed
// them when the reconcile runs.
const nextSlack = 100 * time.Millisecond

// reader reads CronJobs and Jobs from the informer cache (manager.Reader).
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

// writer writes Jobs and CronJob status (client.Client). Its Get reads the
// server: an active Job the cache does not show is looked up there before the
// CronJob forgets it.
type writer interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error
	Status() client.StatusWriter
}

// recorder records events (record.Recorder).
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// reconciler reconciles one CronJob from the cache. Jobs have names derived
// from their schedule time, so a Job the cache does not show yet makes its
// create answer AlreadyExists; a status written from a stale CronJob fails
// with a Conflict and is retried.
type reconciler struct {
	now      func() time.Time
	reader   reader
	client   writer
	recorder recorder
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile brings one CronJob up to date; see the package documentation.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cj := &batchv1.CronJob{}
	if err := r.reader.Get(ctx, req.ObjectKey, cj); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("get cronjob %s: %w", req.ObjectKey, err)
	}
	if cj.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	all := &batchv1.JobList{}
	if err := r.reader.List(ctx, all, client.InNamespace(cj.Namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("list jobs of cronjob %s: %w", req.ObjectKey, err)
	}
	jobs := ownedJobs(cj, all.Items)
	oldStatus := cj.Status
	cj.Status.Active = append(cj.Status.Active[:0:0], cj.Status.Active...)

	if err := r.syncActive(ctx, cj, jobs); err != nil {
		return reconcile.Result{}, err
	}
	jobs, err := r.cleanupHistory(ctx, cj, jobs)
	if err != nil {
		return reconcile.Result{}, err
	}
	result, err := r.schedule(ctx, cj, jobs)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !api.EqualJSON(oldStatus, cj.Status) {
		if err := r.client.Status().Update(ctx, cj); err != nil {
			return reconcile.Result{}, fmt.Errorf("update status of cronjob %s: %w", req.ObjectKey, err)
		}
	}
	return result, nil
}

// schedule creates the Job of the most recent due schedule time, if any, and
// returns when to look again.
func (r *reconciler) schedule(ctx context.Context, cj *batchv1.CronJob, jobs []batchv1.Job) (reconcile.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		return reconcile.Result{}, nil
	}
	if tz := cj.Spec.TimeZone; tz != nil {
		if _, err := time.LoadLocation(*tz); err != nil {
			r.recorder.Event(ctx, cj, record.Warning, "UnknownTimeZone", fmt.Sprintf("invalid timeZone: %q: %s", *tz, err))
			// Nothing to retry until the spec changes.
			return reconcile.Result{}, nil
		}
	}
	sched, err := parseSchedule(cj)
	if err != nil {
		r.recorder.Event(ctx, cj, record.Warning, "UnparseableSchedule",
			fmt.Sprintf("unparseable schedule: %q : %s", cj.Spec.Schedule, errors.Unwrap(err)))
		return reconcile.Result{}, nil
	}
	now := r.now()
	requeue := reconcile.Result{RequeueAfter: sched.next(now).Sub(now) + nextSlack}

	scheduled, missed := sched.mostRecent(earliestTime(cj, now), now)
	if scheduled.IsZero() {
		return requeue, nil
	}
	if missed > tooManyMissed {
		r.recorder.Event(ctx, cj, record.Warning, "TooManyMissedTimes", fmt.Sprintf(
			"too many missed start times: %d. Set or decrease .spec.startingDeadlineSeconds or check clock skew", missed))
	}
	name := jobName(cj, scheduled)
	for _, j := range jobs {
		if j.Name == name {
			// Already ran (its status may not have been recorded).
			setLastSchedule(cj, scheduled)
			return requeue, nil
		}
	}
	switch cj.Spec.ConcurrencyPolicy {
	case batchv1.ForbidConcurrent:
		if len(cj.Status.Active) > 0 {
			log.V(1).Info("Not starting job: prior execution still running and concurrency policy is Forbid", "scheduledTime", scheduled)
			r.recorder.Event(ctx, cj, record.Normal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
			return requeue, nil
		}
	case batchv1.ReplaceConcurrent:
		for _, ref := range cj.Status.Active {
			j := &batchv1.Job{ObjectMeta: api.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace, UID: ref.UID}}
			if err := r.deleteJob(ctx, j); err != nil {
				r.recorder.Event(ctx, cj, record.Warning, "FailedDelete", fmt.Sprintf("Deleted job: %v", err))
				return reconcile.Result{}, fmt.Errorf("delete active job %s: %w", ref.Name, err)
			}
			r.recorder.Event(ctx, cj, record.Normal, "SuccessfulDelete", "Deleted job "+ref.Name)
		}
		cj.Status.Active = nil
	}

	job := newJob(cj, name, scheduled.In(sched.loc))
	if err := r.client.Create(ctx, job); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			r.recorder.Event(ctx, cj, record.Warning, "FailedCreate", fmt.Sprintf("Error creating job: %v", err))
			return reconcile.Result{}, fmt.Errorf("create job %s: %w", name, err)
		}
		// Someone else's Job of that name: do not retry this time.
		setLastSchedule(cj, scheduled)
		return requeue, nil
	}
	r.recorder.Event(ctx, cj, record.Normal, "SuccessfulCreate", "Created job "+job.Name)
	cj.Status.Active = append(cj.Status.Active, jobRef(job))
	setLastSchedule(cj, scheduled)
	return requeue, nil
}

// newJob builds the Job of one schedule time.
func newJob(cj *batchv1.CronJob, name string, scheduled time.Time) *batchv1.Job {
	tmpl := cj.Spec.JobTemplate
	ann := maps.Clone(tmpl.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	ann[batchv1.CronJobScheduledTimestampAnnotation] = scheduled.Format(time.RFC3339)
	return &batchv1.Job{
		ObjectMeta: api.ObjectMeta{
			Name: name, Namespace: cj.Namespace,
			Labels: maps.Clone(tmpl.Labels), Annotations: ann,
			OwnerReferences: []api.OwnerReference{{
				APIVersion: batchv1.GroupVersion.String(), Kind: "CronJob", Name: cj.Name, UID: cj.UID,
				Controller: api.Ptr(true), BlockOwnerDeletion: api.Ptr(true),
			}},
		},
		Spec: tmpl.Spec,
	}
}

func setLastSchedule(cj *batchv1.CronJob, t time.Time) {
	if cj.Status.LastScheduleTime == nil || t.After(cj.Status.LastScheduleTime.Time) {
		cj.Status.LastScheduleTime = api.NewTimePtr(t)
	}
}
