package job

import (
	"context"
	"strings"
	"sync/atomic"
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

// jobAPI holds one unit test's Job and pods in a fakeclient, which the
// reconciler reads and writes. Status writes are checked by the API server's
// rules for jobs/status, and failRemov makes pod patches (finalizer
// changes) fail.
type jobAPI struct {
	t         *testing.T
	fc        *fakeclient.Client
	failRemov atomic.Bool
}

func newJobAPI(t *testing.T, job *batchv1.Job, pods ...corev1.Pod) *jobAPI {
	t.Helper()
	sch, err := all.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	f := &jobAPI{t: t, fc: fakeclient.New(sch, job)}
	f.setPods(pods...)
	f.fc.Fail = func(verb string, _ client.ObjectKey, obj any) error {
		switch verb {
		case "patch":
			if _, ok := obj.(*corev1.Pod); ok && f.failRemov.Load() {
				return context.DeadlineExceeded
			}
		case "update-status":
			j, ok := obj.(*batchv1.Job)
			if !ok {
				return nil
			}
			return batchv1.ValidateJobStatusUpdate(j, f.job()).ToError()
		}
		return nil
	}
	return f
}

func (f *jobAPI) reconciler(now func() time.Time) *reconciler {
	return &reconciler{now: now, backoffBase: 10 * time.Second, backoffMax: 6 * time.Minute,
		reader: f.fc, client: f.fc, recorder: &fakeclient.Recorder{}, expect: newExpectations()}
}

// job returns the Job as stored.
func (f *jobAPI) job() *batchv1.Job {
	f.t.Helper()
	j := &batchv1.Job{}
	if err := f.fc.Get(f.t.Context(), client.ObjectKey{Namespace: "ns", Name: "j"}, j); err != nil {
		f.t.Fatal(err)
	}
	return j
}

// updateJob changes the Job's spec (an update keeps the status).
func (f *jobAPI) updateJob(mutate func(*batchv1.Job)) {
	f.t.Helper()
	j := f.job()
	mutate(j)
	if err := f.fc.Update(f.t.Context(), j); err != nil {
		f.t.Fatal(err)
	}
}

// setPods replaces the stored pods with pods, labelled for the Jobs'
// selector.
func (f *jobAPI) setPods(pods ...corev1.Pod) {
	f.t.Helper()
	l := &corev1.PodList{}
	if err := f.fc.List(f.t.Context(), l); err != nil {
		f.t.Fatal(err)
	}
	for i := range l.Items {
		if err := f.fc.Delete(f.t.Context(), &l.Items[i]); err != nil {
			f.t.Fatal(err)
		}
	}
	for _, p := range pods {
		p.Labels = map[string]string{"a": "b"}
		if err := f.fc.Add(&p); err != nil {
			f.t.Fatal(err)
		}
	}
	f.fc.ResetActions()
}

// created counts the pods created since the last setPods.
func (f *jobAPI) created() int {
	n := 0
	for _, a := range f.fc.Actions() {
		if strings.HasPrefix(a, "create Pod ") {
			n++
		}
	}
	return n
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
	f := newJobAPI(t, job, failed("a", t0), failed("b", t0.Add(time.Second)))
	// Two consecutive failures: 20 s after the last one.
	now := t0.Add(5 * time.Second)
	r := f.reconciler(func() time.Time { return now })
	res, err := r.Reconcile(t.Context(), reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "j"}})
	if err != nil {
		t.Fatal(err)
	}
	if f.created() != 0 || res.RequeueAfter != 16*time.Second {
		t.Fatalf("created %d, requeue %v; want 0 and 16s", f.created(), res.RequeueAfter)
	}
	now = t0.Add(21 * time.Second)
	if _, err := r.Reconcile(t.Context(), reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "j"}}); err != nil {
		t.Fatal(err)
	}
	if f.created() != 1 {
		t.Fatalf("created %d pods after the backoff, want 1", f.created())
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

func TestTrackingSurvivesACrashBetweenRecordAndCount(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	owner := []api.OwnerReference{{UID: "u", Controller: api.Ptr(true)}}
	pod := func(uid string, phase corev1.PodPhase) corev1.Pod {
		return corev1.Pod{ObjectMeta: api.ObjectMeta{Name: uid, Namespace: "ns", UID: uid, OwnerReferences: owner,
			Finalizers: []string{batchv1.JobTrackingFinalizer}}, Status: corev1.PodStatus{Phase: phase}}
	}
	f := newJobAPI(t, &batchv1.Job{ObjectMeta: api.ObjectMeta{Name: "j", Namespace: "ns", UID: "u"},
		Spec: batchv1.JobSpec{Parallelism: api.Ptr[int32](2), Completions: api.Ptr[int32](3), BackoffLimit: api.Ptr[int32](6),
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
		Status: batchv1.JobStatus{StartTime: api.NewTimePtr(t0)}},
		pod("a", corev1.PodSucceeded), pod("b", corev1.PodFailed), pod("c", corev1.PodRunning))
	req := reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "j"}}
	type counters struct {
		succeeded, failed int32
		uncounted         int
	}
	got := func() counters {
		st := f.job().Status
		u := st.UncountedTerminatedPods
		return counters{st.Succeeded, st.Failed, len(u.Succeeded) + len(u.Failed)}
	}
	// The finalizers cannot be removed: the pods are recorded, not counted.
	f.failRemov.Store(true)
	if _, err := f.reconciler(func() time.Time { return t0 }).Reconcile(t.Context(), req); err == nil {
		t.Fatal("Reconcile hid the failed finalizer removal")
	}
	if c := got(); c != (counters{0, 0, 2}) {
		t.Fatalf("after the failed removal: %+v, want 2 uncounted", c)
	}
	// Later rounds count them exactly once.
	f.failRemov.Store(false)
	for range 3 {
		if _, err := f.reconciler(func() time.Time { return t0 }).Reconcile(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		if c := got(); c != (counters{1, 1, 0}) {
			t.Fatalf("counters %+v, want 1 succeeded, 1 failed", c)
		}
	}
	// A counted pod that disappears changes nothing.
	f.setPods(pod("c", corev1.PodRunning))
	if _, err := f.reconciler(func() time.Time { return t0 }).Reconcile(t.Context(), req); err != nil {
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
	sync := func(f *jobAPI, now time.Time) reconcile.Result {
		t.Helper()
		res, err := f.reconciler(func() time.Time { return now }).Reconcile(t.Context(), req)
		if err != nil {
			t.Fatalf("reconcile at %v: %v", now, err)
		}
		return res
	}

	t.Run("suspend and resume", func(t *testing.T) {
		t.Parallel()
		f := newJobAPI(t, newJob(4))
		if res := sync(f, t0); f.job().Status.StartTime == nil || !f.job().Status.StartTime.Equal(t0) || res.RequeueAfter != time.Minute {
			t.Fatalf("first sync: startTime %v, requeue %v; want %v and 1m", f.job().Status.StartTime, res.RequeueAfter, t0)
		}
		f.setPods(readyPod("a"), readyPod("b"))
		sync(f, t0.Add(time.Second))
		if st := f.job().Status; st.Active != 2 || *st.Ready != 2 {
			t.Fatalf("running: active %d, ready %d; want 2 and 2", st.Active, *st.Ready)
		}
		f.updateJob(func(j *batchv1.Job) { j.Spec.Suspend = api.Ptr(true) })
		sync(f, t0.Add(2*time.Second))
		if st := f.job().Status; st.Active != 0 || *st.Ready != 0 || *st.Terminating != 2 || st.StartTime != nil {
			t.Fatalf("suspended: active %d, ready %d, terminating %d, startTime %v; want 0, 0, 2, nil", st.Active, *st.Ready, *st.Terminating, st.StartTime)
		}
		f.setPods()
		sync(f, t0.Add(3*time.Second))
		if f.job().Status.StartTime != nil {
			t.Fatalf("still suspended: startTime %v, want nil", f.job().Status.StartTime)
		}
		f.updateJob(func(j *batchv1.Job) { j.Spec.Suspend = api.Ptr(false) })
		resumed := t0.Add(10 * time.Second)
		if res := sync(f, resumed); res.RequeueAfter != time.Minute {
			t.Fatalf("resumed: requeue %v, want the full active deadline", res.RequeueAfter)
		}
		if st := f.job().Status.StartTime; st == nil || !st.Equal(resumed) {
			t.Fatalf("resumed: startTime %v, want %v", st, resumed)
		}
	})

	t.Run("excess ready pods leave ready", func(t *testing.T) {
		t.Parallel()
		f := newJobAPI(t, newJob(4))
		sync(f, t0)
		f.setPods(readyPod("a"), readyPod("b"))
		sync(f, t0.Add(time.Second))
		f.updateJob(func(j *batchv1.Job) { j.Spec.Parallelism = api.Ptr[int32](0) })
		sync(f, t0.Add(2*time.Second))
		if st := f.job().Status; st.Active != 0 || *st.Ready != 0 || *st.Terminating != 2 {
			t.Fatalf("scaled down: active %d, ready %d, terminating %d; want 0, 0, 2", st.Active, *st.Ready, *st.Terminating)
		}
	})

	t.Run("failing deletes ready pods", func(t *testing.T) {
		t.Parallel()
		f := newJobAPI(t, newJob(4))
		sync(f, t0)
		f.setPods(readyPod("a"), readyPod("b"))
		sync(f, t0.Add(time.Second))
		sync(f, t0.Add(2*time.Minute)) // past the active deadline
		if st := f.job().Status; st.Active != 0 || *st.Ready != 0 || *st.Terminating != 2 {
			t.Fatalf("failing: active %d, ready %d, terminating %d; want 0, 0, 2", st.Active, *st.Ready, *st.Terminating)
		}
	})

	t.Run("completions 0", func(t *testing.T) {
		t.Parallel()
		f := newJobAPI(t, newJob(0))
		sync(f, t0)
		st := f.job().Status
		if findCondition(st.Conditions, batchv1.JobComplete) == nil || st.StartTime == nil || st.CompletionTime == nil ||
			st.CompletionTime.Before(st.StartTime.Time) {
			t.Fatalf("status %+v: want Complete with startTime <= completionTime", st)
		}
	})
}

// laggingReader reads the Job from the store but, while pods is set, lists
// that old list of pods: a cache that has not applied the latest pod events.
type laggingReader struct {
	*fakeclient.Client
	pods *corev1.PodList
}

func (l *laggingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if pl, ok := list.(*corev1.PodList); ok && l.pods != nil {
		cp, err := deepCopy(*l.pods)
		*pl = cp
		return err
	}
	return l.Client.List(ctx, list, opts...)
}

func TestReconcileWaitsForTheCacheToShowItsWrites(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	job := &batchv1.Job{ObjectMeta: api.ObjectMeta{Name: "j", Namespace: "ns", UID: "u"},
		Spec: batchv1.JobSpec{Parallelism: api.Ptr[int32](1), Completions: api.Ptr[int32](2),
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
		Status: batchv1.JobStatus{StartTime: api.NewTimePtr(t0)}}
	done := corev1.Pod{ObjectMeta: api.ObjectMeta{Name: "a", Namespace: "ns", UID: "pa",
		Finalizers:      []string{batchv1.JobTrackingFinalizer},
		OwnerReferences: []api.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "u", Controller: api.Ptr(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}
	f := newJobAPI(t, job, done)
	before := &corev1.PodList{}
	if err := f.fc.List(t.Context(), before); err != nil {
		t.Fatal(err)
	}
	key := reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "j"}}
	now := func() time.Time { return t0.Add(time.Second) }
	reader := &laggingReader{Client: f.fc}
	r := f.reconciler(now)
	r.reader = reader
	if _, err := r.Reconcile(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	if st := f.job().Status; st.Succeeded != 1 || f.created() != 1 {
		t.Fatalf("first sync: succeeded %d, created %d; want 1 and 1", st.Succeeded, f.created())
	}

	// The pod cache still shows a with its finalizer and not the new pod:
	// the Job waits instead of counting a again and creating a second pod.
	reader.pods = before
	f.fc.ResetActions()
	res, err := r.Reconcile(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.fc.Actions(); len(got) != 0 || res.RequeueAfter != time.Second {
		t.Fatalf("sync on a lagging cache: writes %q, requeue %v; want none and 1s", got, res.RequeueAfter)
	}
	// Without the expectations the same view counts a twice (and the Job
	// completes with one of its two completions): what the guard prevents.
	unguarded := f.reconciler(now)
	unguarded.reader = reader
	if _, err := unguarded.Reconcile(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	if st := f.job().Status; st.Succeeded != 2 {
		t.Fatalf("unguarded sync: succeeded %d; the hazard this test guards against changed", st.Succeeded)
	}
}

func TestExpectationsObserved(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	job := func(uid, rv string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: api.ObjectMeta{Name: "j", Namespace: "ns", UID: uid, ResourceVersion: rv}}
	}
	pod := func(uid, rv string, deleting bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: api.ObjectMeta{Name: uid, Namespace: "ns", UID: uid, ResourceVersion: rv,
			OwnerReferences: []api.OwnerReference{{Kind: "Job", Name: "j", UID: "u", Controller: api.Ptr(true)}}}}
		if deleting {
			p.DeletionTimestamp = api.NewTimePtr(t0)
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		record func(e *expectations)
		job    *batchv1.Job
		podsRV string
		pods   []corev1.Pod
		at     time.Time
		want   bool
	}{
		{name: "nothing recorded", record: func(*expectations) {}, job: job("u", "1"), podsRV: "1", want: true},
		{name: "status write not cached", record: func(e *expectations) { e.wroteJob(job("u", "9"), t0) },
			job: job("u", "8"), podsRV: "9", want: false},
		{name: "status write cached", record: func(e *expectations) { e.wroteJob(job("u", "9"), t0) },
			job: job("u", "9"), podsRV: "1", want: true},
		{name: "newer job cached", record: func(e *expectations) { e.wroteJob(job("u", "9"), t0) },
			job: job("u", "12"), podsRV: "1", want: true},
		{name: "pod create not cached", record: func(e *expectations) { p := pod("p", "20", false); e.wrotePod(&p, t0) },
			job: job("u", "1"), podsRV: "19", want: false},
		{name: "pod create cached", record: func(e *expectations) { p := pod("p", "20", false); e.wrotePod(&p, t0) },
			job: job("u", "1"), podsRV: "20", want: true},
		{name: "deleted pod still cached live", record: func(e *expectations) { p := pod("p", "5", false); e.deletedPod(&p, t0) },
			job: job("u", "1"), podsRV: "30", pods: []corev1.Pod{pod("p", "5", false)}, want: false},
		{name: "deleted pod cached terminating", record: func(e *expectations) { p := pod("p", "5", false); e.deletedPod(&p, t0) },
			job: job("u", "1"), podsRV: "30", pods: []corev1.Pod{pod("p", "6", true)}, want: true},
		{name: "deleted pod gone", record: func(e *expectations) { p := pod("p", "5", false); e.deletedPod(&p, t0) },
			job: job("u", "1"), podsRV: "30", want: true},
		{name: "another job of that name", record: func(e *expectations) { e.wroteJob(job("u", "9"), t0) },
			job: job("v", "3"), podsRV: "1", want: true},
		{name: "expired", record: func(e *expectations) { e.wroteJob(job("u", "9"), t0) },
			job: job("u", "8"), podsRV: "1", at: t0.Add(expectationsTimeout + time.Second), want: true},
		{name: "unparsable versions never wait", record: func(e *expectations) { e.wroteJob(job("u", "9"), t0) },
			job: job("u", "x"), podsRV: "y", want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newExpectations()
			tc.record(e)
			at := tc.at
			if at.IsZero() {
				at = t0.Add(time.Second)
			}
			if got := e.observed(tc.job, tc.podsRV, tc.pods, at); got != tc.want {
				t.Errorf("observed = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestNewPodIndexedHostname: as Kubernetes, an Indexed Job's pod is named
// after its index and its host name is JOB-INDEX, whatever the template says;
// a NonIndexed Job's pod keeps the template's host name.
func TestNewPodIndexedHostname(t *testing.T) {
	t.Parallel()
	job := &batchv1.Job{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "indexed-job"}}
	job.Spec.Template.Spec.Hostname = "from-template"
	job.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
	for _, c := range []struct {
		index                  int
		generateName, hostname string
	}{
		{3, "indexed-job-3-", "indexed-job-3"},
		{0, "indexed-job-0-", "indexed-job-0"},
		{-1, "indexed-job-", "from-template"},
	} {
		pod, err := newPod(job, c.index, indexState{})
		if err != nil {
			t.Fatal(err)
		}
		if pod.GenerateName != c.generateName || pod.Spec.Hostname != c.hostname {
			t.Errorf("index %d: generateName %q, hostname %q; want %q, %q", c.index, pod.GenerateName, pod.Spec.Hostname, c.generateName, c.hostname)
		}
	}
}
