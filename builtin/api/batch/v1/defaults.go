package v1

import (
	"math"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// DefaultJob applies Kubernetes' batch/v1 Job defaults: parallelism and
// completions 1 when both are unset, backoffLimit 6 (MaxInt32 with
// backoffLimitPerIndex), completionMode NonIndexed, suspend false,
// podReplacementPolicy TerminatingOrFailed (Failed with a podFailurePolicy),
// condition patterns' status True, the Job's labels from its template when it
// has none, and the pod defaults of the template.
func DefaultJob(j *Job) {
	s := &j.Spec
	if s.Completions == nil && s.Parallelism == nil {
		s.Completions = api.Ptr[int32](1)
		s.Parallelism = api.Ptr[int32](1)
	}
	if s.Parallelism == nil {
		s.Parallelism = api.Ptr[int32](1)
	}
	if s.BackoffLimit == nil {
		if s.BackoffLimitPerIndex != nil {
			s.BackoffLimit = api.Ptr[int32](math.MaxInt32)
		} else {
			s.BackoffLimit = api.Ptr[int32](6)
		}
	}
	if s.Template.Labels != nil && len(j.Labels) == 0 {
		j.Labels = s.Template.Labels
	}
	if s.CompletionMode == nil {
		s.CompletionMode = api.Ptr(NonIndexedCompletion)
	}
	if s.Suspend == nil {
		s.Suspend = api.Ptr(false)
	}
	if s.PodFailurePolicy != nil {
		for _, r := range s.PodFailurePolicy.Rules {
			for i := range r.OnPodConditions {
				if r.OnPodConditions[i].Status == "" {
					r.OnPodConditions[i].Status = corev1.ConditionTrue
				}
			}
		}
	}
	if s.PodReplacementPolicy == nil {
		if s.PodFailurePolicy != nil {
			s.PodReplacementPolicy = api.Ptr(Failed)
		} else {
			s.PodReplacementPolicy = api.Ptr(TerminatingOrFailed)
		}
	}
	corev1.DefaultPodTemplateSpec(&s.Template)
}

// DefaultCronJob applies the CronJob defaults: concurrencyPolicy Allow, suspend
// false, history limits 3 and 1, and the pod defaults of the job's template (as in
// Kubernetes, the job template's JobSpec itself is defaulted when the Job is
// created).
func DefaultCronJob(c *CronJob) {
	s := &c.Spec
	if s.ConcurrencyPolicy == "" {
		s.ConcurrencyPolicy = AllowConcurrent
	}
	if s.Suspend == nil {
		s.Suspend = api.Ptr(false)
	}
	if s.SuccessfulJobsHistoryLimit == nil {
		s.SuccessfulJobsHistoryLimit = api.Ptr[int32](3)
	}
	if s.FailedJobsHistoryLimit == nil {
		s.FailedJobsHistoryLimit = api.Ptr[int32](1)
	}
	corev1.DefaultPodTemplateSpec(&s.JobTemplate.Spec.Template)
}

// PrepareJobForCreate generates the selector and template labels of a new Job
// unless spec.manualSelector is true: the template gets job-name and
// batch.kubernetes.io/job-name (the Job's name) and controller-uid and
// batch.kubernetes.io/controller-uid (uid) where not already set, and the
// selector matches batch.kubernetes.io/controller-uid=uid. The server calls it
// after assigning metadata.uid and before validation.
func PrepareJobForCreate(job *Job, uid string) {
	if job.Spec.ManualSelector != nil && *job.Spec.ManualSelector {
		return
	}
	t := &job.Spec.Template
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for _, k := range []string{LegacyJobNameLabel, JobNameLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = job.Name
		}
	}
	for _, k := range []string{LegacyControllerUIDLabel, ControllerUIDLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = uid
		}
	}
	if job.Spec.Selector == nil {
		job.Spec.Selector = &api.LabelSelector{}
	}
	if job.Spec.Selector.MatchLabels == nil {
		job.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := job.Spec.Selector.MatchLabels[ControllerUIDLabel]; !ok {
		job.Spec.Selector.MatchLabels[ControllerUIDLabel] = uid
	}
}
