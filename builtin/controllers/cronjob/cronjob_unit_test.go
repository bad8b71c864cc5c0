package cronjob

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/builtin/api/all"
	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/fakeclient"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

var t0 = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func TestMostRecent(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		spec, tz      string
		earliest, now time.Time
		wantLatest    time.Time
		wantMissed    int
	}{
		"every minute":       {"* * * * *", "", t0, t0.Add(150 * time.Second), t0.Add(2 * time.Minute), 2},
		"nothing due":        {"* * * * *", "", t0, t0.Add(30 * time.Second), time.Time{}, 0},
		"hourly macro":       {"@hourly", "", t0.Add(-time.Minute), t0.Add(3 * time.Hour), t0.Add(3 * time.Hour), 4},
		"daily in time zone": {"0 9 * * *", "Asia/Tokyo", t0, t0.Add(24 * time.Hour), time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC), 1},
		"many missed":        {"* * * * *", "", t0, t0.Add(3 * time.Hour), t0.Add(3 * time.Hour), 180},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cj := &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: tc.spec}}
			if tc.tz != "" {
				cj.Spec.TimeZone = api.Ptr(tc.tz)
			}
			s, err := parseSchedule(cj)
			if err != nil {
				t.Fatal(err)
			}
			latest, missed := s.mostRecent(tc.earliest, tc.now)
			if !latest.Equal(tc.wantLatest) || missed != tc.wantMissed {
				t.Errorf("mostRecent = %v, %d; want %v, %d", latest, missed, tc.wantLatest, tc.wantMissed)
			}
		})
	}
}

// fake holds the objects of one unit test in a fakeclient, which the
// reconciler reads and writes.
type fake struct {
	t   *testing.T
	fc  *fakeclient.Client
	rec *fakeclient.Recorder
}

func newFake(t *testing.T, cj *batchv1.CronJob) *fake {
	sch, err := all.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return &fake{t: t, fc: fakeclient.New(sch, cj), rec: &fakeclient.Recorder{}}
}

func (f *fake) run(t *testing.T, now time.Time) reconcile.Result {
	t.Helper()
	r := &reconciler{now: func() time.Time { return now }, reader: f.fc, client: f.fc, recorder: f.rec}
	res, err := r.Reconcile(t.Context(), reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "cj"}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// cj returns the CronJob as stored.
func (f *fake) cj() *batchv1.CronJob {
	f.t.Helper()
	cj := &batchv1.CronJob{}
	if err := f.fc.Get(f.t.Context(), client.ObjectKey{Namespace: "ns", Name: "cj"}, cj); err != nil {
		f.t.Fatal(err)
	}
	return cj
}

// jobs returns the stored Jobs in name order.
func (f *fake) jobs() []batchv1.Job {
	f.t.Helper()
	l := &batchv1.JobList{}
	if err := f.fc.List(f.t.Context(), l); err != nil {
		f.t.Fatal(err)
	}
	return l.Items
}

func (f *fake) jobNames() []string {
	var out []string
	for _, j := range f.jobs() {
		out = append(out, j.Name)
	}
	return out
}

// deleted returns the names of the deleted Jobs.
func (f *fake) deleted() []string {
	var out []string
	for _, a := range f.fc.Actions() {
		if name, ok := strings.CutPrefix(a, "delete Job ns/"); ok {
			out = append(out, name)
		}
	}
	return out
}

func newCronJob(mutate func(*batchv1.CronJob)) *batchv1.CronJob {
	cj := &batchv1.CronJob{
		ObjectMeta: api.ObjectMeta{Name: "cj", Namespace: "ns", UID: "cj-uid", CreationTimestamp: api.NewTime(t0)},
		Spec: batchv1.CronJobSpec{Schedule: "* * * * *", ConcurrencyPolicy: batchv1.AllowConcurrent,
			SuccessfulJobsHistoryLimit: api.Ptr[int32](3), FailedJobsHistoryLimit: api.Ptr[int32](1)},
	}
	if mutate != nil {
		mutate(cj)
	}
	return cj
}

func finish(f *fake, name string, typ batchv1.JobConditionType, at time.Time) {
	f.t.Helper()
	for _, j := range f.jobs() {
		if j.Name == name {
			j.Status.Conditions = []batchv1.JobCondition{{Type: typ, Status: corev1.ConditionTrue}}
			j.Status.StartTime = api.NewTimePtr(at.Add(-time.Second))
			if typ == batchv1.JobComplete {
				j.Status.CompletionTime = api.NewTimePtr(at)
			}
			if err := f.fc.Status().Update(f.t.Context(), &j); err != nil {
				f.t.Fatal(err)
			}
		}
	}
}

func minuteName(t time.Time) string { return "cj-" + strconv.FormatInt(t.Unix()/60, 10) }

func TestReconcileCreatesJobAtScheduleTime(t *testing.T) {
	t.Parallel()
	f := newFake(t, newCronJob(nil))
	res := f.run(t, t0.Add(30*time.Second))
	if len(f.jobs()) != 0 || res.RequeueAfter != 30*time.Second+nextSlack {
		t.Fatalf("before the first time: jobs %v, requeue %v", f.jobNames(), res.RequeueAfter)
	}
	res = f.run(t, t0.Add(61*time.Second))
	want := minuteName(t0.Add(time.Minute))
	if d := cmp.Diff([]string{want}, f.jobNames()); d != "" {
		t.Fatalf("jobs (-want +got):\n%s", d)
	}
	j := f.jobs()[0]
	if got := j.Annotations[batchv1.CronJobScheduledTimestampAnnotation]; got != "2026-03-10T12:01:00Z" {
		t.Errorf("scheduled-timestamp annotation = %q", got)
	}
	if res.RequeueAfter != 59*time.Second+nextSlack {
		t.Errorf("requeue = %v, want 59s", res.RequeueAfter)
	}
	if f.cj().Status.LastScheduleTime == nil || !f.cj().Status.LastScheduleTime.Equal(t0.Add(time.Minute)) {
		t.Errorf("lastScheduleTime = %v", f.cj().Status.LastScheduleTime)
	}
	if len(f.cj().Status.Active) != 1 || f.cj().Status.Active[0].Name != want {
		t.Errorf("active = %v", f.cj().Status.Active)
	}
	// Same minute again: nothing new.
	f.run(t, t0.Add(62*time.Second))
	if len(f.jobs()) != 1 {
		t.Errorf("jobs after a second reconcile = %v", f.jobNames())
	}
}

func TestReconcileConcurrencyPolicies(t *testing.T) {
	t.Parallel()
	t.Run("Forbid skips while a job is active", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, newCronJob(func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent }))
		f.run(t, t0.Add(time.Minute))
		f.run(t, t0.Add(2*time.Minute))
		if len(f.jobs()) != 1 {
			t.Fatalf("jobs = %v, want one", f.jobNames())
		}
		finish(f, f.jobs()[0].Name, batchv1.JobComplete, t0.Add(2*time.Minute+10*time.Second))
		f.run(t, t0.Add(2*time.Minute+20*time.Second))
		if len(f.jobs()) != 2 || f.cj().Status.LastSuccessfulTime == nil {
			t.Fatalf("after completion: jobs %v, lastSuccessfulTime %v", f.jobNames(), f.cj().Status.LastSuccessfulTime)
		}
	})
	t.Run("Replace deletes the active job", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, newCronJob(func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = batchv1.ReplaceConcurrent }))
		f.run(t, t0.Add(time.Minute))
		first := f.jobs()[0].Name
		f.run(t, t0.Add(2*time.Minute))
		if d := cmp.Diff([]string{first}, f.deleted()); d != "" {
			t.Errorf("deleted (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]string{minuteName(t0.Add(2 * time.Minute))}, f.jobNames()); d != "" {
			t.Errorf("jobs (-want +got):\n%s", d)
		}
	})
	t.Run("Allow runs concurrently", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, newCronJob(nil))
		f.run(t, t0.Add(time.Minute))
		f.run(t, t0.Add(2*time.Minute))
		if len(f.jobs()) != 2 || len(f.cj().Status.Active) != 2 {
			t.Errorf("jobs %v active %v", f.jobNames(), f.cj().Status.Active)
		}
	})
}

func TestReconcileSuspendDeadlineAndMissed(t *testing.T) {
	t.Parallel()
	t.Run("suspended", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, newCronJob(func(cj *batchv1.CronJob) { cj.Spec.Suspend = api.Ptr(true) }))
		if res := f.run(t, t0.Add(5*time.Minute)); len(f.jobs()) != 0 || res.RequeueAfter != 0 {
			t.Errorf("suspended cronjob created %v, requeue %v", f.jobNames(), res.RequeueAfter)
		}
	})
	t.Run("too many missed", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, newCronJob(nil))
		f.run(t, t0.Add(200*time.Minute+time.Second))
		if d := cmp.Diff([]string{minuteName(t0.Add(200 * time.Minute))}, f.jobNames()); d != "" {
			t.Errorf("jobs (-want +got):\n%s", d)
		}
		if !slices.ContainsFunc(f.rec.Events(), func(e string) bool {
			return strings.HasPrefix(e, "Warning/TooManyMissedTimes: too many missed start times: 200")
		}) {
			t.Errorf("events = %v", f.rec.Events())
		}
	})
	t.Run("startingDeadlineSeconds skips old times", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, newCronJob(func(cj *batchv1.CronJob) {
			cj.Spec.Schedule = "0 * * * *"
			cj.Spec.StartingDeadlineSeconds = api.Ptr[int64](60)
		}))
		f.run(t, t0.Add(time.Hour+2*time.Minute))
		if len(f.jobs()) != 0 {
			t.Errorf("a run missed by more than the deadline started: %v", f.jobNames())
		}
		f.run(t, t0.Add(2*time.Hour+30*time.Second))
		if d := cmp.Diff([]string{minuteName(t0.Add(2 * time.Hour))}, f.jobNames()); d != "" {
			t.Errorf("jobs (-want +got):\n%s", d)
		}
	})
	t.Run("history limits", func(t *testing.T) {
		t.Parallel()
		f := newFake(t, newCronJob(func(cj *batchv1.CronJob) { cj.Spec.SuccessfulJobsHistoryLimit = api.Ptr[int32](1) }))
		for i := 1; i <= 3; i++ {
			at := t0.Add(time.Duration(i) * time.Minute)
			f.run(t, at)
			finish(f, minuteName(at), batchv1.JobComplete, at.Add(time.Second))
		}
		f.run(t, t0.Add(3*time.Minute+5*time.Second))
		if d := cmp.Diff([]string{minuteName(t0.Add(3 * time.Minute))}, f.jobNames()); d != "" {
			t.Errorf("jobs (-want +got):\n%s", d)
		}
	})
}
