package podutil

import (
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

func pod(name, node string, phase corev1.PodPhase, readySince time.Time, restarts int32, created time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: name, CreationTimestamp: api.NewTime(created)}}
	p.Spec.NodeName = node
	p.Status.Phase = phase
	if !readySince.IsZero() {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: api.NewTime(readySince)}}
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: restarts}}
	return p
}

func TestSortForDeletion(t *testing.T) {
	t.Parallel()
	now := time.Now()
	var zero time.Time
	pods := []*corev1.Pod{
		pod("ready-old", "n", corev1.PodRunning, now.Add(-time.Hour), 0, now.Add(-2*time.Hour)),
		pod("ready-new", "n", corev1.PodRunning, now, 0, now.Add(-2*time.Hour)),
		pod("running-notready", "n", corev1.PodRunning, zero, 0, now),
		pod("unknown", "n", corev1.PodUnknown, zero, 0, now),
		pod("pending", "n", corev1.PodPending, zero, 0, now),
		pod("unscheduled", "", corev1.PodPending, zero, 0, now),
		pod("restarts", "n", corev1.PodRunning, zero, 5, now.Add(-time.Hour)),
		pod("newer", "n", corev1.PodRunning, zero, 5, now),
	}
	SortForDeletion(pods)
	want := []string{"unscheduled", "pending", "unknown", "newer", "restarts", "running-notready", "ready-new", "ready-old"}
	for i, p := range pods {
		if p.Name != want[i] {
			var got []string
			for _, p := range pods {
				got = append(got, p.Name)
			}
			t.Fatalf("order = %v, want %v", got, want)
		}
	}
}

func TestDeletionCost(t *testing.T) {
	t.Parallel()
	now := time.Now()
	a := pod("a", "n", corev1.PodRunning, now, 0, now)
	b := pod("b", "n", corev1.PodRunning, now, 0, now)
	b.Annotations = map[string]string{DeletionCostAnnotation: "-10"}
	if CompareForDeletion(b, a) >= 0 {
		t.Fatal("lower deletion cost must go first")
	}
}

func TestAvailableIn(t *testing.T) {
	t.Parallel()
	now := time.Now()
	p := pod("p", "n", corev1.PodRunning, now.Add(-3*time.Second), 0, now)
	if ok, _ := AvailableIn(p, 0, now); !ok {
		t.Error("ready pod with minReadySeconds 0 must be available")
	}
	if ok, w := AvailableIn(p, 5, now); ok || w != 2*time.Second {
		t.Errorf("AvailableIn(5s) = %v, %v; want false, 2s", ok, w)
	}
	if ok, _ := AvailableIn(p, 2, now); !ok {
		t.Error("ready for 3s with minReadySeconds 2 must be available")
	}
	if ok, _ := AvailableIn(pod("q", "n", corev1.PodRunning, time.Time{}, 0, now), 0, now); ok {
		t.Error("not ready pod must not be available")
	}
}

func TestExpectations(t *testing.T) {
	t.Parallel()
	now := time.Now()
	e := NewExpectations(func() time.Time { return now })
	if !e.Satisfied("k") {
		t.Fatal("unknown key must be satisfied")
	}
	e.Expect("k", 2, []string{"ns/a"})
	e.CreationObserved("k")
	if e.Satisfied("k") {
		t.Fatal("pending creation and deletion")
	}
	e.LowerCreations("k", 1)
	e.DeletionObserved("k", "ns/other")
	if e.Satisfied("k") {
		t.Fatal("deletion of ns/a not observed yet")
	}
	e.DeletionObserved("k", "ns/a")
	if !e.Satisfied("k") {
		t.Fatal("all observed")
	}
	e.Expect("k", 1, nil)
	now = now.Add(ExpectationsTTL + time.Second)
	if !e.Satisfied("k") {
		t.Fatal("expired expectations must be satisfied")
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	b := NewBackoff(time.Second, 4*time.Second)
	if in, _ := b.InBackoff("k", t0); in {
		t.Fatal("unknown key in backoff")
	}
	var delays []time.Duration
	now := t0
	for range 4 {
		b.Next("k", now)
		in, left := b.InBackoff("k", now)
		if !in {
			t.Fatal("just attempted, not in backoff")
		}
		delays = append(delays, left)
		now = now.Add(left)
		if in, _ := b.InBackoff("k", now); in {
			t.Fatalf("still in backoff after %v", left)
		}
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}
	for i := range want {
		if delays[i] != want[i] {
			t.Fatalf("delays = %v, want %v", delays, want)
		}
	}
	// Unused for more than twice the maximum: starts over.
	now = now.Add(9 * time.Second)
	b.Next("k", now)
	if _, left := b.InBackoff("k", now); left != time.Second {
		t.Fatalf("delay after a long pause = %v, want 1s", left)
	}
}
