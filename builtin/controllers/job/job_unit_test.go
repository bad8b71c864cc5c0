package job

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

func TestIndexSet(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""}, {"0", "0"}, {"0,1,2", "0-2"}, {"3,1,5-6,2", "1-3,5,6"}, {"0-1", "0,1"}, {"1-3,9", "1-3"}, {"x,4", "4"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			if got := parseIndexSet(tc.in, 8).String(); got != tc.want {
				t.Errorf("parseIndexSet(%q).String() = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestBackoffDelay(t *testing.T) {
	t.Parallel()
	base, maxD := 10*time.Second, 6*time.Minute
	got := []time.Duration{}
	for n := range 8 {
		got = append(got, backoffDelay(n, base, maxD))
	}
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second,
		160 * time.Second, 320 * time.Second, 6 * time.Minute}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("backoffDelay (-want +got):\n%s", d)
	}
}

func TestMatchPodFailurePolicy(t *testing.T) {
	t.Parallel()
	pfp := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
			{Type: "DisruptionTarget", Status: corev1.ConditionTrue}}},
		{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{1, 2}}},
	}}
	pod := func(code int32, conds ...corev1.PodConditionType) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "ns"}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}}
		for _, c := range conds {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue})
		}
		return p
	}
	for name, tc := range map[string]struct {
		pod  *corev1.Pod
		want batchv1.PodFailurePolicyAction
	}{
		"disruption ignored":   {pod(5, "DisruptionTarget"), batchv1.PodFailurePolicyActionIgnore},
		"exit 5 fails the job": {pod(5), batchv1.PodFailurePolicyActionFailJob},
		"exit 1 counts":        {pod(1), ""},
		"exit 0 never matches": {pod(0), ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got, _ := matchPodFailurePolicy(pfp, tc.pod); got != tc.want {
				t.Errorf("action = %q, want %q", got, tc.want)
			}
		})
	}
}

// fakeJobAPI records what the reconciler does, with stubbed functions.
type fakeJobAPI struct {
	job     *batchv1.Job
	pods    []corev1.Pod
	created int
}

func (f *fakeJobAPI) reconciler(now func() time.Time) *reconciler {
	return &reconciler{
		now: now, backoffBase: 10 * time.Second, backoffMax: 6 * time.Minute,
		getJob: func(context.Context, client.ObjectKey) (*batchv1.Job, error) { return f.job, nil },
		listPods: func(context.Context, string, labels.Selector) ([]corev1.Pod, error) {
			return f.pods, nil
		},
		removeFinalizer: func(context.Context, *corev1.Pod) error { return nil },
		addFinalizer:    func(context.Context, *corev1.Pod) error { return nil },
		createPod:       func(context.Context, *corev1.Pod) error { f.created++; return nil },
		deletePod:       func(context.Context, *corev1.Pod) error { return nil },
		updateStatus:    func(context.Context, *batchv1.Job) error { return nil },
		deleteJob:       func(context.Context, *batchv1.Job) error { return nil },
		event:           func(context.Context, api.Object, string, string, string) {},
	}
}

func TestReconcileWaitsForBackoff(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	job := &batchv1.Job{ObjectMeta: api.ObjectMeta{Name: "j", Namespace: "ns", UID: "u"},
		Spec: batchv1.JobSpec{Parallelism: api.Ptr[int32](1), Completions: api.Ptr[int32](1), BackoffLimit: api.Ptr[int32](6),
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
		Status: batchv1.JobStatus{StartTime: api.NewTimePtr(t0)}}
	failed := func(name string, at time.Time) corev1.Pod {
		return corev1.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "ns",
			OwnerReferences: []api.OwnerReference{{UID: "u", Controller: api.Ptr(true)}}},
			Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "c",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: api.NewTime(at)}}}}}}
	}
	f := &fakeJobAPI{job: job, pods: []corev1.Pod{failed("a", t0), failed("b", t0.Add(time.Second))}}
	// Two consecutive failures: 20 s after the last one.
	now := t0.Add(5 * time.Second)
	r := f.reconciler(func() time.Time { return now })
	res, err := r.Reconcile(t.Context(), reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "j"}})
	if err != nil {
		t.Fatal(err)
	}
	if f.created != 0 || res.RequeueAfter != 16*time.Second {
		t.Fatalf("created %d, requeue %v; want 0 and 16s", f.created, res.RequeueAfter)
	}
	now = t0.Add(21 * time.Second)
	if _, err := r.Reconcile(t.Context(), reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "j"}}); err != nil {
		t.Fatal(err)
	}
	if f.created != 1 {
		t.Fatalf("created %d pods after the backoff, want 1", f.created)
	}
}

func TestMatchSuccessPolicy(t *testing.T) {
	t.Parallel()
	sp := &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
		{SucceededIndexes: api.Ptr("0,2-4"), SucceededCount: api.Ptr[int32](2)},
		{SucceededIndexes: api.Ptr("5")},
		{SucceededCount: api.Ptr[int32](4)},
	}}
	for _, tc := range []struct {
		completed string
		want      string
	}{
		{"", ""},
		{"1,5", "Matched rules at index 1"},
		{"0,1", ""},
		{"0,3", "Matched rules at index 0"},
		{"1,6-8", "Matched rules at index 2"},
	} {
		t.Run(tc.completed, func(t *testing.T) {
			t.Parallel()
			got, ok := matchSuccessPolicy(sp, 10, parseIndexSet(tc.completed, 10))
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("matchSuccessPolicy(%q) = %q, %v; want %q", tc.completed, got, ok, tc.want)
			}
		})
	}
	if _, ok := matchSuccessPolicy(nil, 10, parseIndexSet("0-9", 10)); ok {
		t.Error("no policy must not match")
	}
}

// trackingAPI is a stateful fake: status writes and finalizer removals stick.
type trackingAPI struct {
	job       *batchv1.Job
	pods      []corev1.Pod
	failRemov bool
}

func (f *trackingAPI) reconciler(now time.Time) *reconciler {
	r := (&fakeJobAPI{}).reconciler(func() time.Time { return now })
	r.getJob = func(context.Context, client.ObjectKey) (*batchv1.Job, error) { return deepCopy(f.job) }
	r.listPods = func(context.Context, string, labels.Selector) ([]corev1.Pod, error) { return deepCopy(f.pods) }
	r.updateStatus = func(_ context.Context, j *batchv1.Job) error {
		// The API server's rules for jobs/status writes.
		if err := batchv1.ValidateJobStatusUpdate(j, f.job).ToError(); err != nil {
			return err
		}
		var err error
		f.job, err = deepCopy(j)
		return err
	}
	r.removeFinalizer = func(_ context.Context, p *corev1.Pod) error {
		if f.failRemov {
			return context.DeadlineExceeded
		}
		for i := range f.pods {
			if f.pods[i].UID == p.UID {
				f.pods[i].Finalizers = nil
			}
		}
		return nil
	}
	return r
}

func TestTrackingSurvivesACrashBetweenRecordAndCount(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	owner := []api.OwnerReference{{UID: "u", Controller: api.Ptr(true)}}
	pod := func(uid string, phase corev1.PodPhase) corev1.Pod {
		return corev1.Pod{ObjectMeta: api.ObjectMeta{Name: uid, Namespace: "ns", UID: uid, OwnerReferences: owner,
			Finalizers: []string{batchv1.JobTrackingFinalizer}}, Status: corev1.PodStatus{Phase: phase}}
	}
	f := &trackingAPI{
		job: &batchv1.Job{ObjectMeta: api.ObjectMeta{Name: "j", Namespace: "ns", UID: "u"},
			Spec: batchv1.JobSpec{Parallelism: api.Ptr[int32](2), Completions: api.Ptr[int32](3), BackoffLimit: api.Ptr[int32](6),
				Selector: &api.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
			Status: batchv1.JobStatus{StartTime: api.NewTimePtr(t0)}},
		pods: []corev1.Pod{pod("a", corev1.PodSucceeded), pod("b", corev1.PodFailed), pod("c", corev1.PodRunning)},
	}
	req := reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "j"}}
	type counters struct {
		succeeded, failed int32
		uncounted         int
	}
	got := func() counters {
		u := f.job.Status.UncountedTerminatedPods
		return counters{f.job.Status.Succeeded, f.job.Status.Failed, len(u.Succeeded) + len(u.Failed)}
	}
	// The finalizers cannot be removed: the pods are recorded, not counted.
	f.failRemov = true
	if _, err := f.reconciler(t0).Reconcile(t.Context(), req); err == nil {
		t.Fatal("Reconcile hid the failed finalizer removal")
	}
	if c := got(); c != (counters{0, 0, 2}) {
		t.Fatalf("after the failed removal: %+v, want 2 uncounted", c)
	}
	// Later rounds count them exactly once.
	f.failRemov = false
	for range 3 {
		if _, err := f.reconciler(t0).Reconcile(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		if c := got(); c != (counters{1, 1, 0}) {
			t.Fatalf("counters %+v, want 1 succeeded, 1 failed", c)
		}
	}
	// A counted pod that disappears changes nothing.
	f.pods = f.pods[2:]
	if _, err := f.reconciler(t0).Reconcile(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if c := got(); c != (counters{1, 1, 0}) {
		t.Fatalf("counters %+v after the pods went, want 1 succeeded, 1 failed", c)
	}
}

// TestStatusWritesPassStrictValidation drives a Job through suspension,
// resumption and completion, and a completions: 0 Job through its first sync,
// with every status write checked by the API server's rules (trackingAPI).
func TestStatusWritesPassStrictValidation(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	req := reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "j"}}
	owner := []api.OwnerReference{{UID: "u", Controller: api.Ptr(true)}}
	readyPod := func(uid string) corev1.Pod {
		return corev1.Pod{ObjectMeta: api.ObjectMeta{Name: uid, Namespace: "ns", UID: uid, OwnerReferences: owner,
			Finalizers: []string{batchv1.JobTrackingFinalizer}}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	}
	newJob := func(completions int32) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: api.ObjectMeta{Name: "j", Namespace: "ns", UID: "u"},
			Spec: batchv1.JobSpec{Parallelism: api.Ptr[int32](2), Completions: api.Ptr(completions), BackoffLimit: api.Ptr[int32](6),
				ActiveDeadlineSeconds: api.Ptr[int64](60), Suspend: api.Ptr(false),
				Selector: &api.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}}
	}
	sync := func(f *trackingAPI, now time.Time) reconcile.Result {
		t.Helper()
		res, err := f.reconciler(now).Reconcile(t.Context(), req)
		if err != nil {
			t.Fatalf("reconcile at %v: %v", now, err)
		}
		return res
	}

	t.Run("suspend and resume", func(t *testing.T) {
		t.Parallel()
		f := &trackingAPI{job: newJob(4)}
		if res := sync(f, t0); f.job.Status.StartTime == nil || !f.job.Status.StartTime.Equal(t0) || res.RequeueAfter != time.Minute {
			t.Fatalf("first sync: startTime %v, requeue %v; want %v and 1m", f.job.Status.StartTime, res.RequeueAfter, t0)
		}
		f.pods = []corev1.Pod{readyPod("a"), readyPod("b")}
		sync(f, t0.Add(time.Second))
		if st := f.job.Status; st.Active != 2 || *st.Ready != 2 {
			t.Fatalf("running: active %d, ready %d; want 2 and 2", st.Active, *st.Ready)
		}
		f.job.Spec.Suspend = api.Ptr(true)
		sync(f, t0.Add(2*time.Second))
		if st := f.job.Status; st.Active != 0 || *st.Ready != 0 || *st.Terminating != 2 || st.StartTime != nil {
			t.Fatalf("suspended: active %d, ready %d, terminating %d, startTime %v; want 0, 0, 2, nil", st.Active, *st.Ready, *st.Terminating, st.StartTime)
		}
		f.pods = nil
		sync(f, t0.Add(3*time.Second))
		if f.job.Status.StartTime != nil {
			t.Fatalf("still suspended: startTime %v, want nil", f.job.Status.StartTime)
		}
		f.job.Spec.Suspend = api.Ptr(false)
		resumed := t0.Add(10 * time.Second)
		if res := sync(f, resumed); res.RequeueAfter != time.Minute {
			t.Fatalf("resumed: requeue %v, want the full active deadline", res.RequeueAfter)
		}
		if st := f.job.Status.StartTime; st == nil || !st.Equal(resumed) {
			t.Fatalf("resumed: startTime %v, want %v", st, resumed)
		}
	})

	t.Run("excess ready pods leave ready", func(t *testing.T) {
		t.Parallel()
		f := &trackingAPI{job: newJob(4)}
		sync(f, t0)
		f.pods = []corev1.Pod{readyPod("a"), readyPod("b")}
		sync(f, t0.Add(time.Second))
		f.job.Spec.Parallelism = api.Ptr[int32](0)
		sync(f, t0.Add(2*time.Second))
		if st := f.job.Status; st.Active != 0 || *st.Ready != 0 || *st.Terminating != 2 {
			t.Fatalf("scaled down: active %d, ready %d, terminating %d; want 0, 0, 2", st.Active, *st.Ready, *st.Terminating)
		}
	})

	t.Run("failing deletes ready pods", func(t *testing.T) {
		t.Parallel()
		f := &trackingAPI{job: newJob(4)}
		sync(f, t0)
		f.pods = []corev1.Pod{readyPod("a"), readyPod("b")}
		sync(f, t0.Add(time.Second))
		sync(f, t0.Add(2*time.Minute)) // past the active deadline
		if st := f.job.Status; st.Active != 0 || *st.Ready != 0 || *st.Terminating != 2 {
			t.Fatalf("failing: active %d, ready %d, terminating %d; want 0, 0, 2", st.Active, *st.Ready, *st.Terminating)
		}
	})

	t.Run("completions 0", func(t *testing.T) {
		t.Parallel()
		f := &trackingAPI{job: newJob(0)}
		sync(f, t0)
		st := f.job.Status
		if findCondition(st.Conditions, batchv1.JobComplete) == nil || st.StartTime == nil || st.CompletionTime == nil ||
			st.CompletionTime.Before(st.StartTime.Time) {
			t.Fatalf("status %+v: want Complete with startTime <= completionTime", st)
		}
	})
}
