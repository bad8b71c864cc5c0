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
