package workqueue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestItemExponentialFailureRateLimiter(t *testing.T) {
	t.Parallel()
	r := NewItemExponentialFailureRateLimiter[string](5*time.Millisecond, time.Second)
	var got []time.Duration
	for range 10 {
		got = append(got, r.When("a"))
	}
	want := []time.Duration{
		5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond,
		80 * time.Millisecond, 160 * time.Millisecond, 320 * time.Millisecond, 640 * time.Millisecond,
		time.Second, time.Second,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
	if n := r.NumRequeues("a"); n != 10 {
		t.Errorf("NumRequeues(a) = %d, want 10", n)
	}
	if d := r.When("b"); d != 5*time.Millisecond {
		t.Errorf("When(b) = %v, want 5ms: items are independent", d)
	}
	r.Forget("a")
	if n := r.NumRequeues("a"); n != 0 {
		t.Errorf("NumRequeues(a) after Forget = %d, want 0", n)
	}
	if d := r.When("a"); d != 5*time.Millisecond {
		t.Errorf("When(a) after Forget = %v, want 5ms", d)
	}
}

func TestBackoffOverflow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base, max time.Duration
		exp       int
		want      time.Duration
	}{
		{time.Millisecond, time.Hour, 0, time.Millisecond},
		{time.Millisecond, time.Hour, 10, 1024 * time.Millisecond},
		{time.Millisecond, time.Hour, 40, time.Hour},
		{time.Millisecond, time.Hour, 62, time.Hour},
		{time.Millisecond, time.Hour, 63, time.Hour},
		{time.Millisecond, time.Hour, 1000, time.Hour},
		{1, 1<<63 - 1, 62, 1 << 62},
		{2, 1<<63 - 1, 62, 1<<63 - 1},
		{time.Hour, time.Second, 0, time.Second},
	} {
		if got := backoff(tc.base, tc.max, tc.exp); got != tc.want {
			t.Errorf("backoff(%v, %v, %d) = %v, want %v", tc.base, tc.max, tc.exp, got, tc.want)
		}
	}
	r := NewItemExponentialFailureRateLimiter[int](0, 0)
	if d := r.When(1); d != 5*time.Millisecond {
		t.Errorf("default base = %v, want 5ms", d)
	}
	for range 100 {
		r.When(1)
	}
	if d := r.When(1); d != 1000*time.Second {
		t.Errorf("default max = %v, want 1000s", d)
	}
}

func TestBucketRateLimiter(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	r := newBucketRateLimiter[string](2, 3, clock.Now) // 2 qps, burst 3
	var got []time.Duration
	for range 5 {
		got = append(got, r.When("x"))
	}
	want := []time.Duration{0, 0, 0, 500 * time.Millisecond, time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("burst then qps (-want +got):\n%s", diff)
	}
	clock.step(time.Second) // tokens -2 → 0
	if d := r.When("x"); d != 500*time.Millisecond {
		t.Errorf("after 1s: When = %v, want 500ms", d)
	}
	clock.step(time.Hour) // refill caps at burst
	got = got[:0]
	for range 4 {
		got = append(got, r.When("x"))
	}
	want = []time.Duration{0, 0, 0, 500 * time.Millisecond}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after refill (-want +got):\n%s", diff)
	}
	if n := r.NumRequeues("x"); n != 0 {
		t.Errorf("NumRequeues = %d, want 0", n)
	}
	r.Forget("x") // no-op

	unlimited := NewBucketRateLimiter[string](0, 0)
	for range 1000 {
		if d := unlimited.When("x"); d != 0 {
			t.Fatalf("qps 0 (unlimited) returned %v", d)
		}
	}
}

func TestMaxOfRateLimiter(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	exp := NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Hour)
	bucket := newBucketRateLimiter[string](1, 2, clock.Now) // 1 qps, burst 2
	r := NewMaxOfRateLimiter[string](exp, bucket)
	var got []time.Duration
	for range 4 {
		got = append(got, r.When("a"))
	}
	// exponential: 1, 2, 4, 8 ms; bucket: 0, 0, 1 s, 2 s.
	want := []time.Duration{time.Millisecond, 2 * time.Millisecond, time.Second, 2 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
	if n := r.NumRequeues("a"); n != 4 {
		t.Errorf("NumRequeues = %d, want 4", n)
	}
	r.Forget("a")
	if n := r.NumRequeues("a"); n != 0 {
		t.Errorf("NumRequeues after Forget = %d, want 0", n)
	}
}

func TestDefaultControllerRateLimiter(t *testing.T) {
	t.Parallel()
	r := DefaultControllerRateLimiter[string]()
	if d := r.When("a"); d != 5*time.Millisecond {
		t.Errorf("first When = %v, want 5ms", d)
	}
	if d := r.When("a"); d != 10*time.Millisecond {
		t.Errorf("second When = %v, want 10ms", d)
	}
	// The bucket's burst of 100 is nearly spent after 100 more distinct items; the
	// next one waits about 1/10 s.
	for i := range 98 {
		r.When(string(rune('b' + i)))
	}
	if d := r.When("z-last"); d < 90*time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("When after burst = %v, want ≈100ms", d)
	}
}
