package cronjob

import (
	"context"
	"fmt"
	"slices"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/record"
)

// ownedJobs keeps the Jobs whose controller is cj.
func ownedJobs(cj *batchv1.CronJob, jobs []batchv1.Job) []batchv1.Job {
	var out []batchv1.Job
	for _, j := range jobs {
		if controllerutil.IsControlledBy(&j, cj) {
			out = append(out, j)
		}
	}
	return out
}

// deleteJob deletes j and its pods (in the background); a Job already gone
// is deleted.
func (r *reconciler) deleteJob(ctx context.Context, j *batchv1.Job) error {
	return client.IgnoreNotFound(r.client.Delete(ctx, j, client.PropagationPolicy(api.DeletePropagationBackground)))
}

// finishedType returns Complete or Failed for a finished Job, "" otherwise.
func finishedType(j *batchv1.Job) batchv1.JobConditionType {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type
		}
	}
	return ""
}

func jobRef(j *batchv1.Job) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Job", APIVersion: batchv1.GroupVersion.String(),
		Namespace: j.Namespace, Name: j.Name, UID: j.UID, ResourceVersion: j.ResourceVersion}
}

// syncActive makes status.active list exactly the unfinished owned Jobs and
// moves lastSuccessfulTime forward.
func (r *reconciler) syncActive(ctx context.Context, cj *batchv1.CronJob, jobs []batchv1.Job) error {
	byUID := map[string]*batchv1.Job{}
	for i := range jobs {
		byUID[jobs[i].UID] = &jobs[i]
	}
	var active []corev1.ObjectReference
	for _, ref := range cj.Status.Active {
		j, ok := byUID[ref.UID]
		if !ok {
			// A fresh read from the server before forgetting the Job: the
			// cache may not show a Job created moments ago.
			j = &batchv1.Job{}
			err := r.client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, j)
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("get active job %s: %w", ref.Name, err)
			}
			if err != nil || j.UID != ref.UID {
				r.recorder.Event(ctx, cj, record.Normal, "MissingJob", "Active job went missing: "+ref.Name)
				continue
			}
		}
		if t := finishedType(j); t != "" {
			r.recorder.Event(ctx, cj, record.Normal, "SawCompletedJob", fmt.Sprintf("Saw completed job: %s, condition: %s", j.Name, t))
			continue
		}
		active = append(active, ref)
	}
	for i := range jobs {
		j := &jobs[i]
		if finishedType(j) == "" && j.DeletionTimestamp == nil &&
			!slices.ContainsFunc(active, func(ref corev1.ObjectReference) bool { return ref.UID == j.UID }) {
			r.recorder.Event(ctx, cj, record.Warning, "UnexpectedJob", "Saw a job that the controller did not create or forgot: "+j.Name)
			active = append(active, jobRef(j))
		}
		if finishedType(j) == batchv1.JobComplete && j.Status.CompletionTime != nil &&
			(cj.Status.LastSuccessfulTime == nil || j.Status.CompletionTime.After(cj.Status.LastSuccessfulTime.Time)) {
			cj.Status.LastSuccessfulTime = api.NewTimePtr(j.Status.CompletionTime.Time)
		}
	}
	cj.Status.Active = active
	return nil
}

// cleanupHistory deletes the oldest finished Jobs beyond the history limits
// and returns the Jobs left.
func (r *reconciler) cleanupHistory(ctx context.Context, cj *batchv1.CronJob, jobs []batchv1.Job) ([]batchv1.Job, error) {
	limits := map[batchv1.JobConditionType]*int32{
		batchv1.JobComplete: cj.Spec.SuccessfulJobsHistoryLimit,
		batchv1.JobFailed:   cj.Spec.FailedJobsHistoryLimit,
	}
	drop := map[string]bool{}
	for typ, limit := range limits {
		if limit == nil {
			continue
		}
		var finished []batchv1.Job
		for _, j := range jobs {
			if finishedType(&j) == typ && j.DeletionTimestamp == nil {
				finished = append(finished, j)
			}
		}
		if len(finished) <= int(*limit) {
			continue
		}
		slices.SortFunc(finished, func(a, b batchv1.Job) int { return startTime(&a).Compare(startTime(&b).Time) })
		for _, j := range finished[:len(finished)-int(*limit)] {
			if err := r.deleteJob(ctx, &j); err != nil {
				r.recorder.Event(ctx, cj, record.Warning, "FailedDelete", fmt.Sprintf("Deleted job: %v", err))
				return nil, fmt.Errorf("delete old job %s: %w", j.Name, err)
			}
			r.recorder.Event(ctx, cj, record.Normal, "SuccessfulDelete", "Deleted job "+j.Name)
			drop[j.UID] = true
		}
	}
	return slices.DeleteFunc(jobs, func(j batchv1.Job) bool { return drop[j.UID] }), nil
}

// startTime orders Jobs for history cleanup: status.startTime, else creation.
func startTime(j *batchv1.Job) api.Time {
	if j.Status.StartTime != nil {
		return *j.Status.StartTime
	}
	return j.CreationTimestamp
}
