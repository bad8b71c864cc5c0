package podgc

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// fake is a reconciler over in-memory pods and nodes that records writes.
type fake struct {
	mu       sync.Mutex
	now      time.Time
	pods     []*corev1.Pod
	cached   []*corev1.Node
	apiNodes map[string]bool // what the API server answers for a node Get
	lookups  []string
	patched  map[string]map[string]any
	deleted  []string
}

func newFake(t *testing.T, opts Options) (*fake, *reconciler) {
	t.Helper()
	f := &fake{now: time.Unix(1_000_000, 0), apiNodes: map[string]bool{}, patched: map[string]map[string]any{}}
	opts.Now = func() time.Time { return f.now }
	opts.complete()
	r := &reconciler{
		opts: opts, log: logr.Discard(), missingSince: map[string]time.Time{},
		listPods:  func() []*corev1.Pod { return f.pods },
		listNodes: func() []*corev1.Node { return f.cached },
		nodeExists: func(_ context.Context, name string) (bool, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.lookups = append(f.lookups, name)
			return f.apiNodes[name], nil
		},
		patchPodStatus: func(_ context.Context, p *corev1.Pod, body []byte) error {
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				return err
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			f.patched[p.Name] = m
			return nil
		},
		forceDelete: func(_ context.Context, p *corev1.Pod) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.deleted = append(f.deleted, p.Name)
			return nil
		},
	}
	return f, r
}

func mkPod(name, node string, phase corev1.PodPhase, created time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + name, CreationTimestamp: api.NewTime(created)}}
	p.Spec.NodeName = node
	p.Status.Phase = phase
	return p
}

func TestOrphanQuarantineAndAPICheck(t *testing.T) {
	f, r := newFake(t, Options{Quarantine: 40 * time.Second})
	ctx := context.Background()
	f.pods = []*corev1.Pod{
		mkPod("gone", "missing", corev1.PodRunning, f.now),
		mkPod("lagging", "not-cached-yet", corev1.PodRunning, f.now),
		mkPod("done", "missing", corev1.PodSucceeded, f.now),
	}
	f.apiNodes["not-cached-yet"] = true

	for _, d := range []time.Duration{0, 20 * time.Second, 39 * time.Second} {
		f.now = time.Unix(1_000_000, 0).Add(d)
		if err := r.gc(ctx); err != nil {
			t.Fatal(err)
		}
		if len(f.deleted) != 0 || len(f.lookups) != 0 {
			t.Fatalf("at %s, in quarantine: deleted %v, looked up %v", d, f.deleted, f.lookups)
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
	slices.Sort(f.deleted)
	if !slices.Equal(f.deleted, []string{"done", "gone"}) {
		t.Errorf("deleted %v, want the pods of the node the API server does not know", f.deleted)
	}
	if _, ok := f.patched["done"]; ok {
		t.Error("a terminated pod was patched")
	}
	st, _ := f.patched["gone"]["status"].(map[string]any)
	if st["phase"] != "Failed" {
		t.Fatalf("status patch %v, want phase Failed", f.patched["gone"])
	}
	conds, _ := st["conditions"].([]any)
	if len(conds) != 1 {
		t.Fatalf("conditions %v, want DisruptionTarget", conds)
	}
	c := conds[0].(map[string]any)
	if c["type"] != "DisruptionTarget" || c["status"] != "True" || c["reason"] != ReasonDeletionByPodGC || c["message"] != MessageNodeGone {
		t.Errorf("condition %v", c)
	}
}

func TestTerminatedOrder(t *testing.T) {
	f, r := newFake(t, Options{TerminatedPodThreshold: 2})
	t0 := time.Unix(1_000_000, 0)
	evicted := mkPod("evicted", "", corev1.PodFailed, t0.Add(time.Hour))
	evicted.Status.Reason = "Evicted"
	f.pods = []*corev1.Pod{
		mkPod("b-same-second", "", corev1.PodSucceeded, t0),
		mkPod("newest", "", corev1.PodFailed, t0.Add(2*time.Second)),
		mkPod("a-same-second", "", corev1.PodSucceeded, t0),
		mkPod("running", "", corev1.PodRunning, t0.Add(-time.Hour)),
		evicted,
	}
	if err := r.gc(context.Background()); err != nil {
		t.Fatal(err)
	}
	slices.Sort(f.deleted)
	if want := []string{"a-same-second", "evicted"}; !slices.Equal(f.deleted, want) {
		t.Errorf("deleted %v, want %v", f.deleted, want)
	}

	f.deleted = nil
	r.opts.TerminatedPodThreshold = -1
	if err := r.gc(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(f.deleted) != 0 {
		t.Errorf("deleted %v with the collection of terminated pods disabled", f.deleted)
	}
}

func TestErrorsAreReturned(t *testing.T) {
	f, r := newFake(t, Options{})
	p := mkPod("x", "", corev1.PodRunning, f.now)
	p.DeletionTimestamp = api.Ptr(api.NewTime(f.now))
	f.pods = []*corev1.Pod{p}
	boom := errors.New("boom")
	r.forceDelete = func(context.Context, *corev1.Pod) error { return boom }
	if err := r.gc(context.Background()); !errors.Is(err, boom) {
		t.Errorf("gc returned %v, want %v", err, boom)
	}
}
