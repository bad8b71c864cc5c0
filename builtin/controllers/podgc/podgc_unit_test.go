package podgc

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/fakeclient"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// fake is a reconciler whose cache (cached) and server (api) are two
// fakeclients: a node may be on the server before it is in the cache.
type fake struct {
	t      *testing.T
	now    time.Time
	cached *fakeclient.Client
	api    *fakeclient.Client

	mu      sync.Mutex
	lookups []string // node Gets on the server
}

func newFake(t *testing.T, opts Options) (*fake, *reconciler) {
	t.Helper()
	sch, err := all.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	f := &fake{t: t, now: time.Unix(1_000_000, 0), cached: fakeclient.New(sch), api: fakeclient.New(sch)}
	f.api.Fail = func(verb string, key client.ObjectKey, obj any) error {
		if _, ok := obj.(*corev1.Node); ok && verb == "get" {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.lookups = append(f.lookups, key.Name)
		}
		return nil
	}
	opts.Now = func() time.Time { return f.now }
	opts.complete()
	r := &reconciler{opts: opts, log: logr.Discard(), missingSince: map[string]time.Time{}, reader: f.cached, client: f.api}
	return f, r
}

// addPods puts pods in the cache and on the server.
func (f *fake) addPods(pods ...*corev1.Pod) {
	f.t.Helper()
	for _, p := range pods {
		if err := f.cached.Add(p); err != nil {
			f.t.Fatal(err)
		}
		if err := f.api.Add(p); err != nil {
			f.t.Fatal(err)
		}
	}
}

// deleted returns the names of the pods deleted on the server, sorted.
func (f *fake) deleted() []string {
	var out []string
	for _, a := range f.api.Actions() {
		if name, ok := strings.CutPrefix(a, "delete Pod ns/"); ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// patched reports whether the pod's status was patched on the server.
func (f *fake) patched(name string) bool {
	return slices.Contains(f.api.Actions(), "patch-status Pod ns/"+name)
}

// lastStatus returns the status of a deleted pod as it was when deleted.
func (f *fake) lastStatus(name string) corev1.PodStatus {
	f.t.Helper()
	p := &corev1.Pod{}
	if err := f.api.GetDeleted(client.ObjectKey{Namespace: "ns", Name: name}, p); err != nil {
		f.t.Fatal(err)
	}
	return p.Status
}

func mkPod(name, node string, phase corev1.PodPhase, created time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + name, ResourceVersion: "7", CreationTimestamp: api.NewTime(created)}}
	p.Spec.NodeName = node
	p.Status.Phase = phase
	return p
}

func TestOrphanQuarantineAndAPICheck(t *testing.T) {
	f, r := newFake(t, Options{Quarantine: 40 * time.Second})
	ctx := context.Background()
	f.addPods(
		mkPod("gone", "missing", corev1.PodRunning, f.now),
		mkPod("lagging", "not-cached-yet", corev1.PodRunning, f.now),
		mkPod("done", "missing", corev1.PodSucceeded, f.now),
	)
	if err := f.api.Add(&corev1.Node{ObjectMeta: api.ObjectMeta{Name: "not-cached-yet"}}); err != nil {
		t.Fatal(err)
	}

	for _, d := range []time.Duration{0, 20 * time.Second, 39 * time.Second} {
		f.now = time.Unix(1_000_000, 0).Add(d)
		if err := r.gc(ctx); err != nil {
			t.Fatal(err)
		}
		if len(f.deleted()) != 0 || len(f.lookups) != 0 {
			t.Fatalf("at %s, in quarantine: deleted %v, looked up %v", d, f.deleted(), f.lookups)
		}
	}
	f.now = time.Unix(1_000_000, 0).Add(40 * time.Second)
	if err := r.gc(ctx); err != nil {
		t.Fatal(err)
	}
	slices.Sort(f.lookups)
	if !slices.Equal(f.lookups, []string{"missing", "not-cached-yet"}) {
		t.Errorf("looked up %v, want both missing nodes", f.lookups)
	}
	if !slices.Equal(f.deleted(), []string{"done", "gone"}) {
		t.Errorf("deleted %v, want the pods of the node the API server does not know", f.deleted())
	}
	if f.patched("done") {
		t.Error("a terminated pod was patched")
	}
	// The patched status, as it was when the pod was deleted.
	if !f.patched("gone") {
		t.Fatal("the running orphan was not marked failed")
	}
	st := f.lastStatus("gone")
	if st.Phase != corev1.PodFailed {
		t.Fatalf("status %+v, want phase Failed", st)
	}
	if len(st.Conditions) != 1 {
		t.Fatalf("conditions %v, want DisruptionTarget", st.Conditions)
	}
	c := st.Conditions[0]
	if c.Type != "DisruptionTarget" || c.Status != corev1.ConditionTrue || c.Reason != ReasonDeletionByPodGC || c.Message != MessageNodeGone {
		t.Errorf("condition %+v", c)
	}
}

func TestTerminatedOrder(t *testing.T) {
	f, r := newFake(t, Options{TerminatedPodThreshold: 2})
	t0 := time.Unix(1_000_000, 0)
	evicted := mkPod("evicted", "", corev1.PodFailed, t0.Add(time.Hour))
	evicted.Status.Reason = "Evicted"
	f.addPods(
		mkPod("b-same-second", "", corev1.PodSucceeded, t0),
		mkPod("newest", "", corev1.PodFailed, t0.Add(2*time.Second)),
		mkPod("a-same-second", "", corev1.PodSucceeded, t0),
		mkPod("running", "", corev1.PodRunning, t0.Add(-time.Hour)),
		evicted,
	)
	if err := r.gc(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a-same-second", "evicted"}; !slices.Equal(f.deleted(), want) {
		t.Errorf("deleted %v, want %v", f.deleted(), want)
	}

	f.api.ResetActions()
	r.opts.TerminatedPodThreshold = -1
	if err := r.gc(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(f.deleted()) != 0 {
		t.Errorf("deleted %v with the collection of terminated pods disabled", f.deleted())
	}
}

func TestErrorsAreReturned(t *testing.T) {
	f, r := newFake(t, Options{})
	p := mkPod("x", "", corev1.PodRunning, f.now)
	p.DeletionTimestamp = api.Ptr(api.NewTime(f.now))
	f.addPods(p)
	boom := errors.New("boom")
	f.api.Fail = func(verb string, _ client.ObjectKey, _ any) error {
		if verb == "delete" {
			return boom
		}
		return nil
	}
	if err := r.gc(context.Background()); !errors.Is(err, boom) {
		t.Errorf("gc returned %v, want %v", err, boom)
	}
}
