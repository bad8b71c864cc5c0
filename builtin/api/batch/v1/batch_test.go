package v1

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

func resource(t *testing.T, name string) *registry.Resource {
	t.Helper()
	for _, r := range Resources() {
		if r.Resource == name {
			return r
		}
	}
	t.Fatalf("no resource %s", name)
	return nil
}

func manifest(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	m, err := api.DecodeMap(j)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestCanonicalizeManifests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, resource string
		want           map[string]any
	}{
		{"job.yaml", "jobs", map[string]any{
			"spec.parallelism":                 int64(1),
			"spec.completions":                 int64(1),
			"spec.backoffLimit":                int64(4),
			"spec.completionMode":              "NonIndexed",
			"spec.suspend":                     false,
			"spec.podReplacementPolicy":        "TerminatingOrFailed",
			"spec.template.spec.restartPolicy": "Never",
			"spec.template.spec.dnsPolicy":     "ClusterFirst",
		}},
		{"cronjob.yaml", "cronjobs", map[string]any{
			"spec.concurrencyPolicy":                            "Allow",
			"spec.suspend":                                      false,
			"spec.successfulJobsHistoryLimit":                   int64(3),
			"spec.failedJobsHistoryLimit":                       int64(1),
			"spec.jobTemplate.spec.template.spec.restartPolicy": "OnFailure",
			"spec.jobTemplate.spec.template.spec.schedulerName": "default-scheduler",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r := resource(t, tt.resource)
			out, unknown, errs := r.Strategy.Canonicalize(manifest(t, tt.file))
			if len(errs) > 0 || len(unknown) > 0 {
				t.Fatalf("Canonicalize: unknown %v, errors %v", unknown, errs.ToError())
			}
			for path, want := range tt.want {
				if got, _ := api.NestedField(out, strings.Split(path, ".")...); got != want {
					t.Errorf("%s = %#v, want %#v", path, got, want)
				}
			}
			if p, ok := r.Strategy.(registry.Preparer); ok {
				api.SetNestedField(out, "0000-1111", "metadata", "uid")
				p.PrepareForCreate(out)
			}
			if errs := r.Strategy.ValidateCreate(t.Context(), out); len(errs) > 0 {
				t.Errorf("ValidateCreate: %v", errs.ToError())
			}
		})
	}
}

// TestJobCreatePath runs a Job without a selector through the server's create
// order: Canonicalize, metadata.uid, PrepareForCreate, ValidateCreate.
func TestJobCreatePath(t *testing.T) {
	t.Parallel()
	r := resource(t, "jobs")
	out, unknown, errs := r.Strategy.Canonicalize(manifest(t, "job.yaml"))
	if len(errs) > 0 || len(unknown) > 0 {
		t.Fatalf("Canonicalize: unknown %v, errors %v", unknown, errs.ToError())
	}
	if errs := r.Strategy.ValidateCreate(t.Context(), out); len(errs) == 0 {
		t.Fatal("ValidateCreate accepted a job without a selector")
	}
	api.SetNestedField(out, "0000-1111", "metadata", "uid")
	p, ok := r.Strategy.(registry.Preparer)
	if !ok {
		t.Fatal("jobs strategy is not a registry.Preparer")
	}
	before := out
	p.PrepareForCreate(out)
	if errs := r.Strategy.ValidateCreate(t.Context(), out); len(errs) > 0 {
		t.Fatalf("ValidateCreate: %v", errs.ToError())
	}
	j, err := registry.FromMap[Job](before)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{ControllerUIDLabel: "0000-1111"}, j.Spec.Selector.MatchLabels); diff != "" {
		t.Errorf("selector not prepared in place (-want +got):\n%s", diff)
	}
	want := map[string]string{LegacyJobNameLabel: "pi", JobNameLabel: "pi", LegacyControllerUIDLabel: "0000-1111", ControllerUIDLabel: "0000-1111"}
	if diff := cmp.Diff(want, j.Spec.Template.Labels); diff != "" {
		t.Errorf("template labels (-want +got):\n%s", diff)
	}
	if got, _ := api.NestedInt64(out, "spec", "backoffLimit"); got != 4 {
		t.Errorf("spec.backoffLimit = %d after PrepareForCreate, want 4", got)
	}
	p.PrepareForUpdate(out, before)
}

func TestPrepareJobForCreate(t *testing.T) {
	t.Parallel()
	j := &Job{}
	j.Name = "pi"
	PrepareJobForCreate(j, "u1")
	want := map[string]string{"job-name": "pi", "batch.kubernetes.io/job-name": "pi",
		"controller-uid": "u1", "batch.kubernetes.io/controller-uid": "u1"}
	if diff := cmp.Diff(want, j.Spec.Template.Labels); diff != "" {
		t.Errorf("template labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"batch.kubernetes.io/controller-uid": "u1"}, j.Spec.Selector.MatchLabels); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	m := &Job{}
	m.Spec.ManualSelector = api.Ptr(true)
	PrepareJobForCreate(m, "u1")
	if m.Spec.Selector != nil || m.Spec.Template.Labels != nil {
		t.Errorf("manual selector was generated")
	}
}

func validJob() *Job {
	j := &Job{}
	j.Name, j.UID = "pi", "u1"
	j.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "perl"}}
	j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	DefaultJob(j)
	PrepareJobForCreate(j, j.UID)
	return j
}

func TestValidateJob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(j *Job)
		want   []string
	}{
		{"valid", func(*Job) {}, nil},
		{"always", func(j *Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways },
			[]string{`spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`}},
		{"negative", func(j *Job) { j.Spec.Parallelism = api.Ptr[int32](-1); j.Spec.Completions = api.Ptr[int32](-2) },
			[]string{"spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
				"spec.completions: Invalid value: -2: must be greater than or equal to 0"}},
		{"manual without selector", func(j *Job) { j.Spec.ManualSelector = api.Ptr(true); j.Spec.Selector = nil },
			[]string{"spec.selector: Required value"}},
		{"manual mismatch", func(j *Job) {
			j.Spec.ManualSelector = api.Ptr(true)
			j.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"app": "z"}}
		}, []string{"spec.template.metadata.labels: Invalid value: map[string]string{\"batch.kubernetes.io/controller-uid\":\"u1\", \"batch.kubernetes.io/job-name\":\"pi\", \"controller-uid\":\"u1\", \"job-name\":\"pi\"}: `selector` does not match template `labels`"}},
		{"indexed needs completions", func(j *Job) {
			j.Spec.CompletionMode = api.Ptr(IndexedCompletion)
			j.Spec.Completions = nil
		}, []string{"spec.completions: Required value: when completion mode is Indexed"}},
		{"success policy", func(j *Job) {
			indexed(j, 5)
			j.Spec.SuccessPolicy = &SuccessPolicy{Rules: []SuccessPolicyRule{
				{SucceededIndexes: api.Ptr("0,2-4"), SucceededCount: api.Ptr[int32](2)},
				{SucceededCount: api.Ptr[int32](5)},
			}}
		}, nil},
		{"success policy errors", func(j *Job) {
			indexed(j, 5)
			j.Spec.SuccessPolicy = &SuccessPolicy{Rules: []SuccessPolicyRule{
				{},
				{SucceededIndexes: api.Ptr("0-5")},
				{SucceededIndexes: api.Ptr("3,1")},
				{SucceededIndexes: api.Ptr("1-2"), SucceededCount: api.Ptr[int32](3)},
				{SucceededCount: api.Ptr[int32](6)},
			}}
		}, []string{
			"spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be specified",
			`spec.successPolicy.rules[1].succeededIndexes: Invalid value: "0-5": error parsing succeededIndexes: too large index: "5"`,
			`spec.successPolicy.rules[2].succeededIndexes: Invalid value: "3,1": error parsing succeededIndexes: non-increasing order, previous: 3, current: 1`,
			"spec.successPolicy.rules[3].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)",
			"spec.successPolicy.rules[4].succeededCount: Invalid value: 6: must be less than or equal to 5 (the number of specified completions)",
		}},
		{"empty success policy", func(j *Job) { indexed(j, 2); j.Spec.SuccessPolicy = &SuccessPolicy{} },
			[]string{"spec.successPolicy.rules: Required value: at least one rules must be specified when the successPolicy is specified"}},
		{"success policy needs indexed", func(j *Job) {
			j.Spec.SuccessPolicy = &SuccessPolicy{Rules: []SuccessPolicyRule{{SucceededCount: api.Ptr[int32](1)}}}
		}, []string{"spec.successPolicy: Invalid value: requires indexed completion mode"}},
		{"per index", func(j *Job) {
			indexed(j, 5)
			j.Spec.BackoffLimitPerIndex, j.Spec.MaxFailedIndexes = api.Ptr[int32](1), api.Ptr[int32](6)
		}, []string{"spec.maxFailedIndexes: Invalid value: 6: must be less than or equal to completions"}},
		{"max failed indexes alone", func(j *Job) { indexed(j, 5); j.Spec.MaxFailedIndexes = api.Ptr[int32](1) },
			[]string{"spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified"}},
		{"pod failure policy", func(j *Job) {
			j.Spec.PodReplacementPolicy = api.Ptr(Failed)
			j.Spec.PodFailurePolicy = &PodFailurePolicy{Rules: []PodFailurePolicyRule{
				{Action: PodFailurePolicyActionFailIndex, OnExitCodes: &PodFailurePolicyOnExitCodesRequirement{
					ContainerName: api.Ptr("x"), Operator: PodFailurePolicyOnExitCodesOpIn, Values: []int32{0, 3, 3, 2}}},
				{Action: "Retry", OnPodConditions: []PodFailurePolicyOnPodConditionsPattern{{Type: "DisruptionTarget", Status: "Maybe"}}},
				{Action: PodFailurePolicyActionIgnore},
			}}
		}, []string{
			`spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set`,
			`spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "x": must be one of the container or initContainer names in the pod template`,
			"spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
			"spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3",
			"spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{0, 3, 3, 2}: must be ordered",
			`spec.podFailurePolicy.rules[1].action: Unsupported value: "Retry": supported values: "Count", "FailIndex", "FailJob", "Ignore"`,
			`spec.podFailurePolicy.rules[1].onPodConditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"`,
			`spec.podFailurePolicy.rules[2]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required`,
		}},
		{"replacement policy with pod failure policy", func(j *Job) {
			j.Spec.PodReplacementPolicy = api.Ptr(TerminatingOrFailed)
			j.Spec.PodFailurePolicy = &PodFailurePolicy{Rules: []PodFailurePolicyRule{{Action: PodFailurePolicyActionIgnore,
				OnPodConditions: []PodFailurePolicyOnPodConditionsPattern{{Type: "DisruptionTarget", Status: corev1.ConditionTrue}}}}}
		}, []string{`spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := validJob()
			tt.modify(j)
			if diff := cmp.Diff(tt.want, messages(ValidateJob(j))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func indexed(j *Job, n int32) {
	j.Spec.CompletionMode = api.Ptr(IndexedCompletion)
	j.Spec.Completions, j.Spec.Parallelism = api.Ptr(n), api.Ptr(n)
}

func TestValidateJobUpdate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(j *Job)
		want   []string
	}{
		{"max failed indexes is mutable", func(j *Job) { j.Spec.MaxFailedIndexes = api.Ptr[int32](2) }, nil},
		{"elastic indexed", func(j *Job) { j.Spec.Completions, j.Spec.Parallelism = api.Ptr[int32](7), api.Ptr[int32](7) }, nil},
		{"completions", func(j *Job) { j.Spec.Completions = api.Ptr[int32](7) },
			[]string{"spec.completions: Invalid value: 7: field is immutable"}},
		{"backoff limit per index", func(j *Job) { j.Spec.BackoffLimitPerIndex = api.Ptr[int32](2) },
			[]string{"spec.backoffLimitPerIndex: Invalid value: 2: field is immutable"}},
		{"success policy", func(j *Job) { j.Spec.SuccessPolicy = nil },
			[]string{`spec.successPolicy: Invalid value: field is immutable`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			old := validJob()
			indexed(old, 5)
			old.Spec.BackoffLimitPerIndex, old.Spec.MaxFailedIndexes = api.Ptr[int32](1), api.Ptr[int32](1)
			old.Spec.SuccessPolicy = &SuccessPolicy{Rules: []SuccessPolicyRule{{SucceededCount: api.Ptr[int32](1)}}}
			j := validJob()
			indexed(j, 5)
			j.Spec.BackoffLimitPerIndex, j.Spec.MaxFailedIndexes = api.Ptr[int32](1), api.Ptr[int32](1)
			j.Spec.SuccessPolicy = &SuccessPolicy{Rules: []SuccessPolicyRule{{SucceededCount: api.Ptr[int32](1)}}}
			tt.modify(j)
			if diff := cmp.Diff(tt.want, messages(ValidateJobUpdate(j, old))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateCronJob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(c *CronJob)
		want   []string
	}{
		{"valid", func(*CronJob) {}, nil},
		{"no schedule", func(c *CronJob) { c.Spec.Schedule = "" }, []string{"spec.schedule: Required value"}},
		{"bad schedule", func(c *CronJob) { c.Spec.Schedule = "61 * * * *" },
			[]string{`spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61`}},
		{"tz in schedule", func(c *CronJob) { c.Spec.Schedule = "TZ=UTC * * * * *" },
			[]string{`spec.schedule: Invalid value: "TZ=UTC * * * * *": expected exactly 5 fields, found 6: [TZ=UTC * * * * *]`,
				`spec.schedule: Invalid value: "TZ=UTC * * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead`}},
		{"good tz", func(c *CronJob) { c.Spec.TimeZone = api.Ptr("UTC") }, nil},
		{"bad tz", func(c *CronJob) { c.Spec.TimeZone = api.Ptr("Mars/Olympus") },
			[]string{`spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &CronJob{}
			c.Spec.Schedule = "*/5 * * * *"
			c.Spec.JobTemplate.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
			c.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			DefaultCronJob(c)
			tt.modify(c)
			if diff := cmp.Diff(tt.want, messages(ValidateCronJob(c))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestScheduleNext(t *testing.T) {
	t.Parallel()
	from := time.Date(2025, 3, 14, 10, 7, 30, 0, time.UTC)
	tests := []struct {
		spec string
		want time.Time
	}{
		{"* * * * *", time.Date(2025, 3, 14, 10, 8, 0, 0, time.UTC)},
		{"*/15 * * * *", time.Date(2025, 3, 14, 10, 15, 0, 0, time.UTC)},
		{"0 0 * * *", time.Date(2025, 3, 15, 0, 0, 0, 0, time.UTC)},
		{"@hourly", time.Date(2025, 3, 14, 11, 0, 0, 0, time.UTC)},
		{"30 9 1 jan *", time.Date(2026, 1, 1, 9, 30, 0, 0, time.UTC)},
		{"0 12 * * mon-fri", time.Date(2025, 3, 14, 12, 0, 0, 0, time.UTC)},
		{"0 12 * * 0", time.Date(2025, 3, 16, 12, 0, 0, 0, time.UTC)},
		{"0 12 * * 7", time.Date(2025, 3, 16, 12, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		s, err := ParseSchedule(tt.spec)
		if err != nil {
			t.Fatalf("%q: %v", tt.spec, err)
		}
		if got := s.Next(from); !got.Equal(tt.want) {
			t.Errorf("%q: Next = %v, want %v", tt.spec, got, tt.want)
		}
	}
	for _, bad := range []string{"", "* * * *", "60 * * * *", "* 24 * * *", "@often", "a * * * *", "5-1 * * * *"} {
		if _, err := ParseSchedule(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestJobPrinter(t *testing.T) {
	t.Parallel()
	r := resource(t, "jobs")
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	j := validJob()
	j.CreationTimestamp = api.NewTime(now.Add(-2 * time.Hour))
	j.Status.StartTime = api.NewTimePtr(now.Add(-2 * time.Hour))
	j.Status.CompletionTime = api.NewTimePtr(now.Add(-2*time.Hour + 75*time.Second))
	j.Status.Succeeded = 1
	j.Status.Conditions = []JobCondition{{Type: JobComplete, Status: corev1.ConditionTrue}}
	obj, err := registry.ToMap(j)
	if err != nil {
		t.Fatal(err)
	}
	row, err := r.Printer.Row(obj, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"pi", "Complete", "1/1", "75s", "120m", "c", "perl", "batch.kubernetes.io/controller-uid=u1"}
	if diff := cmp.Diff(want, row); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
	var names []string
	for _, c := range r.Printer.Columns {
		if c.Priority == 0 {
			names = append(names, strings.ToUpper(c.Name))
		}
	}
	if diff := cmp.Diff([]string{"NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	// Running job: duration since start, parallel completions.
	j.Status = JobStatus{StartTime: api.NewTimePtr(now.Add(-30 * time.Second))}
	j.Spec.Completions, j.Spec.Parallelism = nil, api.Ptr[int32](3)
	obj, _ = registry.ToMap(j)
	row, _ = r.Printer.Row(obj, now)
	if row[1] != "Running" || row[2] != "0/1 of 3" || row[3] != "30s" {
		t.Errorf("running row = %v", row)
	}
	for _, res := range Resources() {
		cells, err := res.Printer.Row(map[string]any{"metadata": map[string]any{"name": "x"}}, now)
		if err != nil || len(cells) != len(res.Printer.Columns) {
			t.Errorf("%s: %d cells for %d columns (%v)", res.Resource, len(cells), len(res.Printer.Columns), err)
		}
	}
}
