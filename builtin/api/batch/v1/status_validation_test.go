package v1

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

var (
	t0 = api.NewTimePtr(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	t1 = api.NewTimePtr(time.Date(2025, 1, 2, 3, 5, 0, 0, time.UTC))
)

func cond(t JobConditionType) JobCondition {
	return JobCondition{Type: t, Status: corev1.ConditionTrue}
}

// complete makes j a Job the controller finished successfully.
func complete(j *Job) {
	j.Status.StartTime, j.Status.CompletionTime = t0, t1
	j.Status.Conditions = []JobCondition{cond(JobSuccessCriteriaMet), cond(JobComplete)}
	j.Status.Succeeded = 1
}

func TestValidateJobStatusUpdate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		spec        func(j *Job) // applied to both
		old, modify func(j *Job)
		want        []string
	}{
		{name: "running", modify: func(j *Job) {
			j.Status.StartTime, j.Status.Active, j.Status.Ready, j.Status.Terminating = t0, 2, api.Ptr[int32](1), api.Ptr[int32](0)
			j.Status.UncountedTerminatedPods = &UncountedTerminatedPods{Succeeded: []string{"a"}, Failed: []string{"b"}}
		}},
		{name: "negative counters", modify: func(j *Job) {
			j.Status.Active, j.Status.Succeeded, j.Status.Failed = -1, -2, -3
			j.Status.Ready, j.Status.Terminating = api.Ptr[int32](-4), api.Ptr[int32](-5)
		}, want: []string{
			"status.active: Invalid value: -1: must be greater than or equal to 0",
			"status.succeeded: Invalid value: -2: must be greater than or equal to 0",
			"status.failed: Invalid value: -3: must be greater than or equal to 0",
			"status.ready: Invalid value: -4: must be greater than or equal to 0",
			"status.terminating: Invalid value: -5: must be greater than or equal to 0",
			"status.failed: Invalid value: -3: cannot decrease the failed counter",
			"status.succeeded: Invalid value: -2: cannot decrease the succeeded counter",
		}},
		{name: "uncounted uids", modify: func(j *Job) {
			j.Status.UncountedTerminatedPods = &UncountedTerminatedPods{Succeeded: []string{"a", "a", ""}, Failed: []string{"b", "a"}}
		}, want: []string{
			`status.uncountedTerminatedPods.succeeded[1]: Duplicate value: "a"`,
			`status.uncountedTerminatedPods.succeeded[2]: Invalid value: "": must not be empty`,
			`status.uncountedTerminatedPods.failed[1]: Duplicate value: "a"`,
		}},
		{name: "counters decrease", old: func(j *Job) { j.Status.Succeeded, j.Status.Failed = 3, 2 },
			modify: func(j *Job) { j.Status.Succeeded, j.Status.Failed = 2, 1 },
			want: []string{
				"status.failed: Invalid value: 1: cannot decrease the failed counter",
				"status.succeeded: Invalid value: 2: cannot decrease the succeeded counter",
			}},
		{name: "elastic indexed job may lose succeeded", spec: func(j *Job) { indexed(j, 4) },
			old:    func(j *Job) { j.Status.Succeeded, j.Status.CompletedIndexes = 3, "0-2" },
			modify: func(j *Job) { j.Status.Succeeded, j.Status.CompletedIndexes = 2, "0-1" }},
		{name: "completed indexes", spec: func(j *Job) { indexed(j, 4) },
			modify: func(j *Job) { j.Status.CompletedIndexes = "1,0,9" },
			want:   []string{`status.completedIndexes: Invalid value: "1,0,9": error parsing completedIndexes: non-increasing order, previous: 1, current: 0`}},
		{name: "completed indexes out of range after scale-down are tolerated", spec: func(j *Job) { indexed(j, 2) },
			old:    func(j *Job) { j.Status.CompletedIndexes = "0-3" },
			modify: func(j *Job) { j.Status.Active = 1 }},
		{name: "completed indexes of a NonIndexed job", modify: func(j *Job) { j.Status.CompletedIndexes = "0" },
			want: []string{`status.completedIndexes: Invalid value: "0": cannot set non-empty completedIndexes when non-indexed completion mode`}},
		{name: "failed indexes", spec: func(j *Job) { indexed(j, 4); j.Spec.BackoffLimitPerIndex = api.Ptr[int32](1) },
			modify: func(j *Job) { j.Status.CompletedIndexes, j.Status.FailedIndexes = "0-2", api.Ptr("2-3") },
			want:   []string{`status.failedIndexes: Invalid value: "2-3": failedIndexes and completedIndexes overlap at index: 2`}},
		{name: "failed indexes malformed", spec: func(j *Job) { indexed(j, 4); j.Spec.BackoffLimitPerIndex = api.Ptr[int32](1) },
			modify: func(j *Job) { j.Status.FailedIndexes = api.Ptr("x") },
			want:   []string{`status.failedIndexes: Invalid value: "x": error parsing failedIndexes: cannot convert string to integer for index: "x"`}},
		{name: "failed indexes without backoffLimitPerIndex", spec: func(j *Job) { indexed(j, 4) },
			modify: func(j *Job) { j.Status.FailedIndexes = api.Ptr("1") },
			want:   []string{`status.failedIndexes: Invalid value: "1": cannot set non-null failedIndexes when backoffLimitPerIndex is null`}},
		{name: "complete", modify: complete},
		{name: "completion time without Complete", modify: func(j *Job) { j.Status.StartTime, j.Status.CompletionTime = t0, t1 },
			want: []string{`status.completionTime: Invalid value: "2025-01-02T03:05:00Z": cannot set completionTime when there is no Complete=True condition`}},
		{name: "Complete without completion time", modify: func(j *Job) { complete(j); j.Status.CompletionTime = nil },
			want: []string{"status.completionTime: Required value: completionTime is required for Complete jobs"}},
		{name: "completion time before start time", modify: func(j *Job) { complete(j); j.Status.StartTime = t1; j.Status.CompletionTime = t0 },
			want: []string{`status.completionTime: Invalid value: "2025-01-02T03:04:05Z": completionTime cannot be set before startTime`}},
		{name: "completion time is immutable", old: complete, modify: func(j *Job) { complete(j); j.Status.CompletionTime = api.NewTimePtr(t1.Add(time.Hour)) },
			want: []string{`status.completionTime: Invalid value: "2025-01-02T04:05:00Z": completionTime cannot be mutated`}},
		{name: "Complete without SuccessCriteriaMet", modify: func(j *Job) { complete(j); j.Status.Conditions = j.Status.Conditions[1:] },
			want: []string{"status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition"}},
		{name: "finished with active, terminating or uncounted pods", modify: func(j *Job) {
			complete(j)
			j.Status.Active, j.Status.Terminating = 1, api.Ptr[int32](1)
			j.Status.UncountedTerminatedPods = &UncountedTerminatedPods{Failed: []string{"x"}}
		}, want: []string{
			"status.active: Invalid value: 1: active>0 is invalid for finished job",
			"status.uncountedTerminatedPods: Invalid value: uncountedTerminatedPods needs to be empty for finished job",
			"status.terminating: Invalid value: 1: terminating>0 is invalid for finished job",
		}},
		{name: "a finished status already out of line does not block other writes",
			old:    func(j *Job) { complete(j); j.Status.Active = 1 },
			modify: func(j *Job) { complete(j); j.Status.Active = 1; j.Status.Failed = 1 }},
		{name: "Failed without FailureTarget", modify: func(j *Job) { j.Status.StartTime = t0; j.Status.Conditions = []JobCondition{cond(JobFailed)} },
			want: []string{"status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition"}},
		{name: "failed", modify: func(j *Job) {
			j.Status.StartTime, j.Status.Failed = t0, 1
			j.Status.Conditions = []JobCondition{cond(JobFailureTarget), cond(JobFailed)}
		}},
		{name: "Complete and Failed", modify: func(j *Job) {
			complete(j)
			j.Status.Conditions = append(j.Status.Conditions, cond(JobFailureTarget), cond(JobFailed))
		}, want: []string{
			"status.conditions: Invalid value: cannot set Complete=True and Failed=true conditions",
			"status.conditions: Invalid value: cannot set Complete=True and FailureTarget=true conditions",
			"status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and Failed=true conditions",
			"status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
		}},
		{name: "terminal conditions stay", old: complete, modify: func(j *Job) { complete(j); j.Status.Conditions = nil; j.Status.CompletionTime = nil },
			want: []string{
				"status.conditions: Invalid value: cannot disable the terminal Complete=True condition",
				"status.conditions: Invalid value: cannot disable the SuccessCriteriaMet=True condition",
			}},
		{name: "SuccessCriteriaMet after Complete",
			old:    func(j *Job) { complete(j); j.Status.Conditions = j.Status.Conditions[1:] },
			modify: complete,
			want:   []string{"status.conditions: Invalid value: cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"}},
		{name: "Complete with a success policy", spec: func(j *Job) {
			indexed(j, 2)
			j.Spec.SuccessPolicy = &SuccessPolicy{Rules: []SuccessPolicyRule{{SucceededCount: api.Ptr[int32](1)}}}
		}, old: func(j *Job) { complete(j); j.Status.Conditions = j.Status.Conditions[1:] },
			modify: func(j *Job) { complete(j); j.Status.Conditions = j.Status.Conditions[1:]; j.Status.Failed = 1 },
			want:   []string{"status.conditions: Invalid value: cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True"}},
		{name: "a started job gets its start time", modify: func(j *Job) { j.Status.StartTime = t1 }},
		{name: "start time of an unsuspended job cannot change", old: func(j *Job) { j.Status.StartTime = t0 },
			modify: func(j *Job) { j.Status.StartTime = t1 },
			want:   []string{"status.startTime: Required value: startTime cannot be removed for unsuspended job"}},
		{name: "start time of an unsuspended job cannot be removed", old: func(j *Job) { j.Status.StartTime = t0 },
			modify: func(j *Job) { j.Status.StartTime = nil },
			want:   []string{"status.startTime: Required value: startTime cannot be removed for unsuspended job"}},
		{name: "a suspended job loses its start time", spec: func(j *Job) { j.Spec.Suspend = api.Ptr(true) },
			old: func(j *Job) { j.Status.StartTime = t0 }, modify: func(j *Job) { j.Status.StartTime = nil }},
		{name: "a resumed job gets a new start time", old: func(j *Job) { j.Status.StartTime = nil },
			modify: func(j *Job) { j.Status.StartTime = t1 }},
		{name: "more ready than active", old: func(j *Job) { j.Status.StartTime, j.Status.Active, j.Status.Ready = t0, 2, api.Ptr[int32](2) },
			modify: func(j *Job) { j.Status.Active = 0 },
			want:   []string{"status.ready: Invalid value: 2: cannot set more ready pods than active"}},
		{name: "ready drops with active", old: func(j *Job) { j.Status.StartTime, j.Status.Active, j.Status.Ready = t0, 2, api.Ptr[int32](2) },
			modify: func(j *Job) { j.Status.Active, j.Status.Ready = 0, api.Ptr[int32](0) }},
		{name: "finished without start time", modify: func(j *Job) { complete(j); j.Status.StartTime = nil },
			want: []string{"status.startTime: Required value: startTime is required for finished job"}},
		{name: "a finished job already without start time does not block other writes",
			old:    func(j *Job) { complete(j); j.Status.StartTime = nil },
			modify: func(j *Job) { j.Status.Failed = 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			old, j := validJob(), validJob()
			if tt.spec != nil {
				tt.spec(old)
				tt.spec(j)
			}
			if tt.old != nil {
				tt.old(old)
				tt.old(j)
			}
			tt.modify(j)
			if diff := cmp.Diff(tt.want, messages(ValidateJobStatusUpdate(j, old))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestJobStatusChecksControllerRules covers the rules once left off for our
// Job controller's sake, all at once.
func TestJobStatusChecksControllerRules(t *testing.T) {
	t.Parallel()
	old, j := validJob(), validJob()
	old.Status.StartTime = t0
	complete(j)
	j.Status.StartTime = nil
	j.Status.CompletionTime = t1
	j.Status.Active, j.Status.Ready = 0, api.Ptr[int32](1)
	c := jobStatusChecksFor(j, old)
	if !c.finishedWithoutStartTime || !c.startTimeUpdateForUnsuspended || !c.moreReadyThanActive {
		t.Errorf("jobStatusChecksFor leaves rules off: %+v", c)
	}
	want := []string{
		"status.startTime: Required value: startTime is required for finished job",
		"status.ready: Invalid value: 1: cannot set more ready pods than active",
		"status.startTime: Required value: startTime cannot be removed for unsuspended job",
	}
	if diff := cmp.Diff(want, messages(validateJobStatusUpdate(j, old, c))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestIndexesOverlap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		completed, failed string
		want              int32
		ok                bool
	}{
		{"", "1", 0, false},
		{"0-2,5", "3-4,6", 0, false},
		{"0-2,5", "3,5-6", 5, true},
		{"4-6", "1,x,5", 5, true},
		{"0,2,4", "1,3", 0, false},
	}
	for _, tt := range tests {
		got, ok := indexesOverlap(tt.completed, tt.failed, 10)
		if got != tt.want || ok != tt.ok {
			t.Errorf("indexesOverlap(%q, %q) = %d, %v; want %d, %v", tt.completed, tt.failed, got, ok, tt.want, tt.ok)
		}
	}
}

// TestJobStrategyStatusUpdate checks the strategy validates status writes with
// ValidateJobStatusUpdate and not ValidateJobUpdate.
func TestJobStrategyStatusUpdate(t *testing.T) {
	t.Parallel()
	sv, ok := JobStrategy().(registry.StatusValidator)
	if !ok {
		t.Fatal("the Job strategy is not a registry.StatusValidator")
	}
	old := validJob()
	old.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways // invalid spec, stored earlier
	j := validJob()
	j.Spec = old.Spec
	j.Status.Succeeded = -1
	om, err := registry.ToMap(old)
	if err != nil {
		t.Fatal(err)
	}
	jm, err := registry.ToMap(j)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"status.succeeded: Invalid value: -1: must be greater than or equal to 0",
		"status.succeeded: Invalid value: -1: cannot decrease the succeeded counter",
	}
	if diff := cmp.Diff(want, messages(sv.ValidateStatusUpdate(context.Background(), jm, om))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
