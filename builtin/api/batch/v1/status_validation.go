package v1

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/api/internal/apivalidation"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

// ValidateJobStatusUpdate checks a write through the jobs/status subresource
// (metadata excluded: the server validates it), as Kubernetes 1.32 does with
// the JobManagedBy feature (beta, on by default): ValidateJobUpdateStatus with
// the options of the job status strategy. Most transition rules apply only when
// the status fields they look at change, so a status that is already out of
// line does not block unrelated writes.
func ValidateJobStatusUpdate(j, old *Job) field.ErrorList {
	return validateJobStatusUpdate(j, old, jobStatusChecksFor(j, old))
}

// jobStatusChecks says which of the optional rules of Kubernetes' Job status
// validation run (its JobStatusValidationOptions).
type jobStatusChecks struct {
	decreasingSucceeded               bool
	invalidCompletedIndexes           bool
	invalidFailedIndexes              bool
	completedIndexesForNonIndexed     bool
	failedIndexesWithoutPerIndexLimit bool
	failedIndexesOverlapCompleted     bool
	finishedWithActive                bool
	finishedWithoutStartTime          bool
	finishedWithUncounted             bool
	startTimeUpdateForUnsuspended     bool
	completionBeforeStart             bool
	notCompleteWithCompletionTime     bool
	completeWithoutCompletionTime     bool
	completeWithFailed                bool
	completeWithFailureTarget         bool
	failedWithoutFailureTarget        bool
	completeWithoutSuccessCriteriaMet bool
	finishedWithTerminating           bool
	moreReadyThanActive               bool
}

// jobStatusChecksFor is Kubernetes' getStatusValidationOptions with JobManagedBy
// enabled: a rule runs when the fields it looks at change.
//
// The Job controller (builtin/controllers/job) writes statuses these rules
// accept, as Kubernetes' does: it clears startTime while a Job is suspended
// and sets a new one on resume, lowers ready with the ready pods it deletes,
// and sets startTime no later than the finishing condition.
func jobStatusChecksFor(j, old *Job) jobStatusChecks {
	st, os := &j.Status, &old.Status
	indexed := isIndexedJob(j)
	finishedChanged := isJobFinished(old) != isJobFinished(j)
	completeChanged := jobConditionTrue(old, JobComplete) != jobConditionTrue(j, JobComplete)
	failedChanged := jobConditionTrue(old, JobFailed) != jobConditionTrue(j, JobFailed)
	failureTargetChanged := jobConditionTrue(old, JobFailureTarget) != jobConditionTrue(j, JobFailureTarget)
	successCriteriaMetChanged := jobConditionTrue(old, JobSuccessCriteriaMet) != jobConditionTrue(j, JobSuccessCriteriaMet)
	completedIndexesChanged := os.CompletedIndexes != st.CompletedIndexes
	failedIndexesChanged := !equalPtr(os.FailedIndexes, st.FailedIndexes)
	activeChanged := os.Active != st.Active
	readyChanged := !equalPtr(os.Ready, st.Ready)
	terminatingChanged := !equalPtr(os.Terminating, st.Terminating)
	startTimeChanged := !equalTime(os.StartTime, st.StartTime)
	completionTimeChanged := !equalTime(os.CompletionTime, st.CompletionTime)
	uncountedChanged := !reflect.DeepEqual(normalizeUncounted(os.UncountedTerminatedPods), normalizeUncounted(st.UncountedTerminatedPods))
	return jobStatusChecks{
		// Elastic Indexed Jobs (completions == parallelism) may scale down.
		decreasingSucceeded:               !indexed || !equalPtr(j.Spec.Completions, j.Spec.Parallelism),
		invalidCompletedIndexes:           completedIndexesChanged,
		invalidFailedIndexes:              failedIndexesChanged,
		completedIndexesForNonIndexed:     completedIndexesChanged,
		failedIndexesWithoutPerIndexLimit: failedIndexesChanged,
		failedIndexesOverlapCompleted:     failedIndexesChanged || completedIndexesChanged,
		finishedWithActive:                finishedChanged || activeChanged,
		finishedWithoutStartTime:          finishedChanged || startTimeChanged,
		finishedWithUncounted:             finishedChanged || uncountedChanged,
		startTimeUpdateForUnsuspended:     startTimeChanged,
		completionBeforeStart:             startTimeChanged || completionTimeChanged,
		notCompleteWithCompletionTime:     completeChanged || completionTimeChanged,
		completeWithoutCompletionTime:     completeChanged || completionTimeChanged,
		completeWithFailed:                completeChanged || failedChanged,
		completeWithFailureTarget:         completeChanged || failureTargetChanged,
		failedWithoutFailureTarget:        failedChanged || failedIndexesChanged,
		completeWithoutSuccessCriteriaMet: completeChanged || successCriteriaMetChanged,
		finishedWithTerminating:           finishedChanged || terminatingChanged,
		moreReadyThanActive:               readyChanged || activeChanged,
	}
}

func validateJobStatusUpdate(j, old *Job, c jobStatusChecks) field.ErrorList {
	p := field.NewPath("status")
	errs := validateJobStatus(j, p, c)
	cp := p.Child("conditions")
	for _, t := range []JobConditionType{JobFailed, JobComplete, JobFailureTarget} {
		if jobConditionTrue(old, t) && !jobConditionTrue(j, t) {
			errs = append(errs, field.Invalid(cp, field.OmitValue, fmt.Sprintf("cannot disable the terminal %s=True condition", t)))
		}
	}
	st, os := &j.Status, &old.Status
	if st.Failed < os.Failed {
		errs = append(errs, field.Invalid(p.Child("failed"), st.Failed, "cannot decrease the failed counter"))
	}
	if c.decreasingSucceeded && st.Succeeded < os.Succeeded {
		errs = append(errs, field.Invalid(p.Child("succeeded"), st.Succeeded, "cannot decrease the succeeded counter"))
	}
	// Removing completionTime is left to the Complete-condition rules.
	if st.CompletionTime != nil && os.CompletionTime != nil && !equalTime(st.CompletionTime, os.CompletionTime) {
		errs = append(errs, field.Invalid(p.Child("completionTime"), timeValue(st.CompletionTime), "completionTime cannot be mutated"))
	}
	// Setting a startTime where there was none is how a Job starts.
	if c.startTimeUpdateForUnsuspended && os.StartTime != nil && !equalTime(os.StartTime, st.StartTime) &&
		(j.Spec.Suspend == nil || !*j.Spec.Suspend) {
		errs = append(errs, field.Required(p.Child("startTime"), "startTime cannot be removed for unsuspended job"))
	}
	if jobConditionTrue(old, JobSuccessCriteriaMet) && !jobConditionTrue(j, JobSuccessCriteriaMet) {
		errs = append(errs, field.Invalid(cp, field.OmitValue, "cannot disable the SuccessCriteriaMet=True condition"))
	}
	if jobConditionTrue(old, JobComplete) && !jobConditionTrue(old, JobSuccessCriteriaMet) && jobConditionTrue(j, JobSuccessCriteriaMet) {
		errs = append(errs, field.Invalid(cp, field.OmitValue, "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"))
	}
	return errs
}

// validateJobStatus is Kubernetes' validateJobStatus: the rules that look at
// the new status alone.
func validateJobStatus(j *Job, p *field.Path, c jobStatusChecks) field.ErrorList {
	st := &j.Status
	errs := apivalidation.ValidateNonnegativeField(int64(st.Active), p.Child("active"))
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(st.Succeeded), p.Child("succeeded"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(st.Failed), p.Child("failed"))...)
	errs = append(errs, validateOptionalNonnegative(st.Ready, p.Child("ready"))...)
	errs = append(errs, validateOptionalNonnegative(st.Terminating, p.Child("terminating"))...)
	if u := st.UncountedTerminatedPods; u != nil {
		up := p.Child("uncountedTerminatedPods")
		seen := map[string]bool{}
		check := func(lp *field.Path, uids []string) {
			for i, uid := range uids {
				switch {
				case uid == "":
					errs = append(errs, field.Invalid(lp.Index(i), uid, "must not be empty"))
				case seen[uid]:
					errs = append(errs, field.Duplicate(lp.Index(i), uid))
				default:
					seen[uid] = true
				}
			}
		}
		check(up.Child("succeeded"), u.Succeeded)
		check(up.Child("failed"), u.Failed)
	}
	cp := p.Child("conditions")
	complete, failed := jobConditionTrue(j, JobComplete), jobConditionTrue(j, JobFailed)
	failureTarget, successCriteriaMet := jobConditionTrue(j, JobFailureTarget), jobConditionTrue(j, JobSuccessCriteriaMet)
	finished := complete || failed
	if c.completeWithFailed && complete && failed {
		errs = append(errs, field.Invalid(cp, field.OmitValue, "cannot set Complete=True and Failed=true conditions"))
	}
	if c.completeWithFailureTarget && complete && failureTarget {
		errs = append(errs, field.Invalid(cp, field.OmitValue, "cannot set Complete=True and FailureTarget=true conditions"))
	}
	if c.notCompleteWithCompletionTime && st.CompletionTime != nil && !complete {
		errs = append(errs, field.Invalid(p.Child("completionTime"), timeValue(st.CompletionTime), "cannot set completionTime when there is no Complete=True condition"))
	}
	if c.completeWithoutCompletionTime && st.CompletionTime == nil && complete {
		errs = append(errs, field.Required(p.Child("completionTime"), "completionTime is required for Complete jobs"))
	}
	if c.completionBeforeStart && st.StartTime != nil && st.CompletionTime != nil && st.CompletionTime.Before(st.StartTime.Time) {
		errs = append(errs, field.Invalid(p.Child("completionTime"), timeValue(st.CompletionTime), "completionTime cannot be set before startTime"))
	}
	if c.failedWithoutFailureTarget && failed && !failureTarget {
		errs = append(errs, field.Invalid(cp, field.OmitValue, "cannot set Failed=True condition without the FailureTarget=true condition"))
	}
	if c.completeWithoutSuccessCriteriaMet && complete && !successCriteriaMet {
		errs = append(errs, field.Invalid(cp, field.OmitValue, "cannot set Complete=True condition without the SuccessCriteriaMet=true condition"))
	}
	if c.finishedWithActive && finished && st.Active > 0 {
		errs = append(errs, field.Invalid(p.Child("active"), st.Active, "active>0 is invalid for finished job"))
	}
	if c.finishedWithoutStartTime && finished && st.StartTime == nil {
		errs = append(errs, field.Required(p.Child("startTime"), "startTime is required for finished job"))
	}
	if c.finishedWithUncounted && finished && st.UncountedTerminatedPods != nil &&
		len(st.UncountedTerminatedPods.Succeeded)+len(st.UncountedTerminatedPods.Failed) > 0 {
		errs = append(errs, field.Invalid(p.Child("uncountedTerminatedPods"), field.OmitValue, "uncountedTerminatedPods needs to be empty for finished job"))
	}
	completions := j.Spec.Completions
	if c.invalidCompletedIndexes && completions != nil {
		if _, err := ValidateIndexesFormat(st.CompletedIndexes, *completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("completedIndexes"), st.CompletedIndexes, fmt.Sprintf("error parsing completedIndexes: %s", err)))
		}
	}
	if c.invalidFailedIndexes && completions != nil && j.Spec.BackoffLimitPerIndex != nil && st.FailedIndexes != nil {
		if _, err := ValidateIndexesFormat(*st.FailedIndexes, *completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("failedIndexes"), *st.FailedIndexes, fmt.Sprintf("error parsing failedIndexes: %s", err)))
		}
	}
	indexed := isIndexedJob(j)
	if c.completedIndexesForNonIndexed && st.CompletedIndexes != "" && !indexed {
		errs = append(errs, field.Invalid(p.Child("completedIndexes"), st.CompletedIndexes, "cannot set non-empty completedIndexes when non-indexed completion mode"))
	}
	// A NonIndexed Job has no backoffLimitPerIndex either.
	if c.failedIndexesWithoutPerIndexLimit && j.Spec.BackoffLimitPerIndex == nil && st.FailedIndexes != nil {
		errs = append(errs, field.Invalid(p.Child("failedIndexes"), *st.FailedIndexes, "cannot set non-null failedIndexes when backoffLimitPerIndex is null"))
	}
	if c.failedIndexesOverlapCompleted && completions != nil && st.FailedIndexes != nil {
		if i, ok := indexesOverlap(st.CompletedIndexes, *st.FailedIndexes, *completions); ok {
			errs = append(errs, field.Invalid(p.Child("failedIndexes"), *st.FailedIndexes, fmt.Sprintf("failedIndexes and completedIndexes overlap at index: %d", i)))
		}
	}
	if c.finishedWithTerminating && finished && st.Terminating != nil && *st.Terminating > 0 {
		errs = append(errs, field.Invalid(p.Child("terminating"), *st.Terminating, "terminating>0 is invalid for finished job"))
	}
	if c.moreReadyThanActive && st.Ready != nil && *st.Ready > st.Active {
		errs = append(errs, field.Invalid(p.Child("ready"), *st.Ready, "cannot set more ready pods than active"))
	}
	// With JobManagedBy SuccessCriteriaMet may be set on any Job (the
	// "extended scope"), but never together with a failure.
	if successCriteriaMet && failed {
		errs = append(errs, field.Invalid(cp, field.OmitValue, "cannot set SuccessCriteriaMet=True and Failed=true conditions"))
	}
	if successCriteriaMet && failureTarget {
		errs = append(errs, field.Invalid(cp, field.OmitValue, "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"))
	}
	if j.Spec.SuccessPolicy != nil && !successCriteriaMet && complete {
		errs = append(errs, field.Invalid(cp, field.OmitValue, "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True"))
	}
	return errs
}

// indexesOverlap returns the first index both index sets hold. Malformed
// intervals are skipped: the format rules report them.
func indexesOverlap(completed, failed string, completions int32) (int32, bool) {
	if completed == "" || failed == "" {
		return 0, false
	}
	cs, fs := parseIntervals(completed, completions), parseIntervals(failed, completions)
	for i, k := 0, 0; i < len(cs) && k < len(fs); {
		c, f := cs[i], fs[k]
		if c[0] <= f[1] && f[0] <= c[1] {
			return max(c[0], f[0]), true
		}
		if c[0] <= f[0] {
			i++
		} else {
			k++
		}
	}
	return 0, false
}

// parseIntervals returns the well-formed intervals of an index set.
func parseIntervals(s string, completions int32) [][2]int32 {
	var out [][2]int32
	for _, part := range strings.Split(s, ",") {
		if _, err := ValidateIndexesFormat(part, completions); err != nil || part == "" {
			continue
		}
		lo, hi, ok := strings.Cut(part, "-")
		x, _ := strconv.Atoi(lo)
		y := x
		if ok {
			y, _ = strconv.Atoi(hi)
		}
		out = append(out, [2]int32{int32(x), int32(y)})
	}
	return out
}

func isIndexedJob(j *Job) bool {
	return j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == IndexedCompletion
}

func isJobFinished(j *Job) bool {
	return jobConditionTrue(j, JobComplete) || jobConditionTrue(j, JobFailed)
}

func jobConditionTrue(j *Job, t JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func equalTime(a, b *api.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Time.Equal(b.Time)
}

// timeValue is the value an error shows for a timestamp.
func timeValue(t *api.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// normalizeUncounted makes empty lists and a missing struct compare equal, as
// Kubernetes' semantic equality does for empty slices.
func normalizeUncounted(u *UncountedTerminatedPods) *UncountedTerminatedPods {
	if u == nil {
		return &UncountedTerminatedPods{}
	}
	out := UncountedTerminatedPods{Succeeded: u.Succeeded, Failed: u.Failed}
	if len(out.Succeeded) == 0 {
		out.Succeeded = nil
	}
	if len(out.Failed) == 0 {
		out.Failed = nil
	}
	return &out
}
