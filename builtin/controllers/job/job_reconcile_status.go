package job

import (
	"time"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

func findCondition(conds []batchv1.JobCondition, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range conds {
		if conds[i].Type == t && conds[i].Status == corev1.ConditionTrue {
			return &conds[i]
		}
	}
	return nil
}

// setCondition sets a condition and reports whether its status changed (or
// it was added).
func setCondition(conds *[]batchv1.JobCondition, t batchv1.JobConditionType, status corev1.ConditionStatus, reason, msg string, now time.Time) bool {
	ts := api.NewTime(now)
	for i := range *conds {
		c := &(*conds)[i]
		if c.Type != t {
			continue
		}
		changed := c.Status != status
		if changed {
			c.LastTransitionTime = ts
		}
		c.Status, c.Reason, c.Message, c.LastProbeTime = status, reason, msg, ts
		return changed
	}
	*conds = append(*conds, batchv1.JobCondition{Type: t, Status: status, Reason: reason, Message: msg,
		LastProbeTime: ts, LastTransitionTime: ts})
	return true
}

// isFinished reports whether the Job has the Complete or Failed condition.
func isFinished(job *batchv1.Job) bool {
	return findCondition(job.Status.Conditions, batchv1.JobComplete) != nil ||
		findCondition(job.Status.Conditions, batchv1.JobFailed) != nil
}

// finishTime is when a finished Job finished.
func finishTime(job *batchv1.Job) time.Time {
	if job.Status.CompletionTime != nil {
		return job.Status.CompletionTime.Time
	}
	for _, t := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed} {
		if c := findCondition(job.Status.Conditions, t); c != nil {
			return c.LastTransitionTime.Time
		}
	}
	return job.CreationTimestamp.Time
}
