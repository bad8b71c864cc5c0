package workqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// drain gets n items, marking each Done, and returns them in order.
func drain[T comparable](t *testing.T, q *Typed[T], n int) []T {
	t.Helper()
	var got []T
	for range n {
		item, shutdown := q.Get()
		if shutdown {
			t.Fatalf("Get reported shutdown after %d items", len(got))
		}
		got = append(got, item)
		q.Done(item)
	}
	return got
}

func TestFIFOAndDedup(t *testing.T) {
	t.Parallel()
	q := New(Options[string]{})
	defer q.ShutDown()
	for _, k := range []string{"a", "b", "a", "c", "b", "a"} {
		q.Add(k)
	}
	if got := q.Len(); got != 3 {
		t.Fatalf("Len() = %d, want 3", got)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, drain(t, q, 3)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if got := q.Len(); got != 0 {
		t.Errorf("Len() after drain = %d, want 0", got)
	}
}

func TestDirtyWhileProcessing(t *testing.T) {
	t.Parallel()
	q := New(Options[string]{})
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")
	item, _ := q.Get()
	if item != "a" {
		t.Fatalf("Get() = %q, want a", item)
	}
	q.Add("a") // dirty while processing: not handed out yet
	q.Add("a") // stingy
	if got := q.Len(); got != 1 {
		t.Fatalf("Len() while a processing = %d, want 1 (b only)", got)
	}
	q.Add("c")
	q.Done("a") // re-queued behind c
	if diff := cmp.Diff([]string{"b", "c", "a"}, drain(t, q, 3)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	q.Done("never-got") // ignored
	if got := q.Len(); got != 0 {
		t.Errorf("Len() = %d, want 0", got)
	}
}

// TestTakenAcrossOverflow checks that Add and Done learn that Get took an item
// (Get itself records nothing) whether the item went straight into the FIFO's
// ring or through its overflow list into the ring. Each item is added again
// while it is processed, so it must come back exactly once; a Done for an item
// still queued changes nothing. (A pop straight out of the overflow list, which
// only a race produces, is TestFIFOPopStraightFromOverflow's.)
func TestTakenAcrossOverflow(t *testing.T) {
	t.Parallel()
	q := New(Options[int]{})
	defer q.ShutDown()
	const n = 3*ringSize + 5
	for i := range n {
		q.Add(i)
	}
	q.Done(n - 1) // queued, not taken: ignored
	for want := range n {
		item, _ := q.Get()
		if item != want {
			t.Fatalf("Get() = %d, want %d", item, want)
		}
		q.Add(item) // processing: remembered, not queued
		q.Add(item) // stingy
		q.Done(item)
	}
	if got := q.Len(); got != n {
		t.Fatalf("Len() after the first round = %d, want %d", got, n)
	}
	for want := range n {
		item, _ := q.Get()
		if item != want {
			t.Fatalf("second round: Get() = %d, want %d", item, want)
		}
		q.Done(item)
	}
	if got := q.Len(); got != 0 {
		t.Fatalf("Len() after the second round = %d, want 0", got)
	}
	if got := q.processing(); got != 0 {
		t.Fatalf("processing() = %d, want 0", got)
	}
}

// TestStress runs many producers and workers over few keys, and over more keys
// than the FIFO's ring holds, and checks the two guarantees that matter to
// controllers: a key is never held by two workers at once, and the last add of
// each key is followed by a Get that sees it.
func TestStress(t *testing.T) {
	t.Parallel()
	for _, keys := range []int{16, 3 * ringSize} {
		for _, metrics := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d keys, metrics %v", keys, metrics), func(t *testing.T) {
				t.Parallel()
				stress(t, keys, metrics)
			})
		}
	}
}

// stress is TestStress's run; with metrics it also checks that the depth
// counts nothing once every item is Done.
func stress(t *testing.T, keys int, metrics bool) {
	const (
		producers = 8
		workers   = 8
		addsEach  = 5000
	)
	opts := Options[int]{}
	if metrics {
		opts = Options[int]{Name: "stress", MetricsProvider: NewPrometheusMetrics(prometheus.NewRegistry())}
	}
	q := New(opts)
	var (
		inFlight = make([]atomic.Int32, keys)
		version  = make([]atomic.Int64, keys) // bumped before each Add
		seen     = make([]atomic.Int64, keys) // highest version a worker saw after Get
		failures atomic.Int32
		wg, pw   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				if n := inFlight[k].Add(1); n != 1 {
					failures.Add(1)
				}
				v := version[k].Load()
				for {
					s := seen[k].Load()
					if v <= s || seen[k].CompareAndSwap(s, v) {
						break
					}
				}
				if k%3 == 0 {
					time.Sleep(time.Microsecond) // some slow items
				}
				inFlight[k].Add(-1)
				q.Done(k)
			}
		})
	}
	for p := range producers {
		pw.Go(func() {
			for i := range addsEach {
				k := (p*7 + i) % keys
				version[k].Add(1)
				q.Add(k)
			}
		})
	}
	pw.Wait()
	// Let the workers catch up, then stop them.
	eventually(t, "queue to empty", func() bool {
		for k := range keys {
			if seen[k].Load() != version[k].Load() {
				return false
			}
		}
		return true
	})
	if err := q.ShutDownWithDrain(t.Context()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if n := failures.Load(); n != 0 {
		t.Errorf("a key was processed by two workers at once %d times", n)
	}
	if d := q.depth.Load(); d != 0 {
		t.Errorf("depth = %d with nothing queued", d)
	}
}

func TestShutDownUnblocksGet(t *testing.T) {
	t.Parallel()
	q := New(Options[string]{})
	q.Add("a")
	done := make(chan []string)
	go func() {
		var got []string
		for {
			item, shutdown := q.Get()
			if shutdown {
				done <- got
				return
			}
			got = append(got, item)
			q.Done(item)
		}
	}()
	eventually(t, "a to be taken", func() bool { return q.Len() == 0 })
	q.ShutDown()
	q.ShutDown() // idempotent
	if diff := cmp.Diff([]string{"a"}, <-done); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if !q.ShuttingDown() {
		t.Error("ShuttingDown() = false after ShutDown")
	}
	q.Add("b")
	if got := q.Len(); got != 0 {
		t.Errorf("Len() after add during shutdown = %d, want 0", got)
	}
	if _, shutdown := q.Get(); !shutdown {
		t.Error("Get() on a shut-down empty queue did not report shutdown")
	}
}

func TestShutDownKeepsQueuedItems(t *testing.T) {
	t.Parallel()
	q := New(Options[string]{})
	q.Add("a")
	q.Add("b")
	q.ShutDown()
	if diff := cmp.Diff([]string{"a", "b"}, drain(t, q, 2)); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if _, shutdown := q.Get(); !shutdown {
		t.Error("Get() did not report shutdown")
	}
}

func TestShutDownWithDrain(t *testing.T) {
	t.Parallel()
	q := New(Options[string]{})
	q.Add("a")
	q.Add("b")
	a, _ := q.Get()
	b, _ := q.Get()
	q.Add("a") // dirty while processing: re-queued by Done even during the drain

	drained := make(chan error, 1)
	go func() { drained <- q.ShutDownWithDrain(t.Context()) }()
	eventually(t, "shutdown to start", q.ShuttingDown)

	q.Done(a)
	select {
	case err := <-drained:
		t.Fatalf("drain returned %v with b still processing", err)
	case <-time.After(20 * time.Millisecond):
	}
	q.Done(b)
	if err := <-drained; err != nil {
		t.Fatalf("ShutDownWithDrain: %v", err)
	}
	// The re-queued a is still handed out, then the queue reports shutdown.
	if diff := cmp.Diff([]string{"a"}, drain(t, q, 1)); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if _, shutdown := q.Get(); !shutdown {
		t.Error("Get() did not report shutdown")
	}
	if err := q.ShutDownWithDrain(t.Context()); err != nil {
		t.Errorf("second ShutDownWithDrain on an idle queue: %v", err)
	}
}

func TestShutDownWithDrainContext(t *testing.T) {
	t.Parallel()
	q := New(Options[string]{})
	q.Add("a")
	a, _ := q.Get()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if err := q.ShutDownWithDrain(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ShutDownWithDrain = %v, want deadline exceeded", err)
	}
	q.Done(a)
	if err := q.ShutDownWithDrain(t.Context()); err != nil {
		t.Errorf("ShutDownWithDrain after Done: %v", err)
	}
}

func TestAddAfter(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	q := New(Options[string]{Clock: clock})
	defer q.ShutDown()
	start := clock.Now()

	q.AddAfter("c", 3*time.Second)
	q.AddAfter("a", 1*time.Second)
	q.AddAfter("b", 2*time.Second)
	q.AddAfter("b", 5*time.Second)  // later: ignored, b stays at 2 s
	q.AddAfter("d", 10*time.Second) // moved to 2 s below; after b, which came first
	q.AddAfter("d", 2*time.Second)
	q.AddAfter("now", 0) // immediate
	if diff := cmp.Diff([]string{"now"}, drain(t, q, 1)); diff != "" {
		t.Errorf("immediate (-want +got):\n%s", diff)
	}

	for _, step := range []struct {
		at   time.Duration
		want []string
	}{
		{1 * time.Second, []string{"a"}},
		{2 * time.Second, []string{"b", "d"}},
		{3 * time.Second, []string{"c"}},
	} {
		eventually(t, fmt.Sprintf("timer at %v", step.at), func() bool { return clock.hasTimerAt(start.Add(step.at)) })
		clock.step(start.Add(step.at).Sub(clock.Now()))
		eventually(t, fmt.Sprintf("items at %v", step.at), func() bool { return q.Len() == len(step.want) })
		if diff := cmp.Diff(step.want, drain(t, q, len(step.want))); diff != "" {
			t.Errorf("items at %v (-want +got):\n%s", step.at, diff)
		}
	}
	clock.step(time.Hour)
	time.Sleep(10 * time.Millisecond)
	if got := q.Len(); got != 0 {
		t.Errorf("Len() after all deadlines = %d, want 0 (each item once)", got)
	}
}

func TestAddAfterEarlierWakesLoop(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	q := New(Options[string]{Clock: clock})
	defer q.ShutDown()
	start := clock.Now()
	q.AddAfter("late", time.Hour)
	eventually(t, "timer for late", func() bool { return clock.hasTimerAt(start.Add(time.Hour)) })
	q.AddAfter("early", time.Second)
	eventually(t, "timer for early", func() bool { return clock.hasTimerAt(start.Add(time.Second)) })
	clock.step(time.Second)
	if diff := cmp.Diff([]string{"early"}, drain(t, q, 1)); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
}

func TestAddAfterShutDown(t *testing.T) {
	t.Parallel()
	q := New(Options[string]{})
	q.AddAfter("a", time.Hour)
	q.ShutDown()
	q.AddAfter("b", time.Hour) // ignored, starts nothing
	if _, shutdown := q.Get(); !shutdown {
		t.Error("Get() did not report shutdown")
	}
}

func TestAddAfterRealClock(t *testing.T) {
	t.Parallel()
	q := New(Options[string]{})
	defer q.ShutDown()
	start := time.Now()
	q.AddAfter("a", 20*time.Millisecond)
	item, _ := q.Get()
	if item != "a" {
		t.Fatalf("Get() = %q", item)
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Errorf("a came after %v, want at least 20ms", waited)
	}
	q.Done(item)
}

func TestAddRateLimited(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	q := New(Options[string]{
		Clock:       clock,
		RateLimiter: NewItemExponentialFailureRateLimiter[string](time.Second, time.Minute),
	})
	defer q.ShutDown()
	start := clock.Now()
	q.AddRateLimited("a") // 1 s
	q.AddRateLimited("a") // 2 s: the earlier deadline wins
	if got := q.NumRequeues("a"); got != 2 {
		t.Errorf("NumRequeues = %d, want 2", got)
	}
	eventually(t, "timer", func() bool { return clock.hasTimerAt(start.Add(time.Second)) })
	clock.step(time.Second)
	if diff := cmp.Diff([]string{"a"}, drain(t, q, 1)); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	q.Forget("a")
	if got := q.NumRequeues("a"); got != 0 {
		t.Errorf("NumRequeues after Forget = %d, want 0", got)
	}
}

// TestNoAllocs checks that a warmed queue does not allocate for Add, Get and Done,
// with and without metrics.
func TestNoAllocs(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys int
		opts Options[string]
	}{
		{"plain", 256, Options[string]{}},
		{"metrics", 256, Options[string]{Name: "allocs", MetricsProvider: NewPrometheusMetrics(nil)}},
		{"beyond-idle", 4 * maxIdle, Options[string]{}}, // slots released and reused
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := New(tc.opts)
			defer q.ShutDown()
			keys := make([]string, tc.keys)
			for i := range keys {
				keys[i] = fmt.Sprintf("ns/name-%d", i)
			}
			cycle := func() {
				for _, k := range keys {
					q.Add(k)
				}
				for range keys {
					k, _ := q.Get()
					q.Add(k) // dirty while processing
					q.Done(k)
				}
				for range keys {
					k, _ := q.Get()
					q.Done(k)
				}
			}
			for range 5 { // warm up
				cycle()
			}
			if allocs := testing.AllocsPerRun(20, cycle); allocs != 0 {
				t.Errorf("allocations per %d items = %v, want 0", len(keys), allocs)
			}
		})
	}
}

// TestIdleSlots checks that idle items keep their slot only up to maxIdle and that
// items work the same whether their slot was kept or released.
func TestIdleSlots(t *testing.T) {
	t.Parallel()
	q := New(Options[int]{})
	defer q.ShutDown()
	const n = 3 * maxIdle
	for round := range 3 {
		for i := range n {
			q.Add(i)
		}
		got := drain(t, q, n)
		for i, item := range got {
			if item != i {
				t.Fatalf("round %d: item %d = %d", round, i, item)
			}
		}
		kept, slots := 0, 0
		for i := range q.shards {
			sh := &q.shards[i]
			sh.mu.Lock()
			kept += sh.index.n
			slots += int(sh.nslots)
			sh.mu.Unlock()
		}
		if kept != maxIdle {
			t.Errorf("round %d: %d items keep a slot, want %d", round, kept, maxIdle)
		}
		if slots != n {
			t.Errorf("round %d: %d slots, want %d (reused, not grown)", round, slots, n)
		}
	}
	// An item whose slot is kept behaves like a new one.
	q.Add(n - 1)
	item, _ := q.Get()
	q.Add(n - 1) // dirty while processing
	if q.Len() != 0 {
		t.Fatal("dirty item queued while processing")
	}
	q.Done(item)
	q.Done(item) // not processing: ignored
	if diff := cmp.Diff([]int{n - 1}, drain(t, q, 1)); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
}

// TestWaitingGets checks items handed directly to blocked Gets: each goes to one
// Get, is processing from then on (an Add while it is processing is not handed
// to another waiting Get), comes back to a waiting Get on Done, and ShutDown
// releases the Gets still waiting.
func TestWaitingGets(t *testing.T) {
	t.Parallel()
	q := New(Options[string]{})
	waiting := func() int {
		return int(q.waiting.Load())
	}
	type result struct {
		item     string
		shutdown bool
	}
	results := make(chan result, 8)
	get := func() {
		item, shutdown := q.Get()
		results <- result{item, shutdown}
	}
	for range 3 {
		go get()
	}
	eventually(t, "three waiting Gets", func() bool { return waiting() == 3 })
	q.Add("a")
	q.Add("b")
	got := map[string]bool{}
	for range 2 {
		r := <-results
		if r.shutdown || got[r.item] {
			t.Fatalf("Get = %+v after %v", r, got)
		}
		got[r.item] = true
	}
	q.Add("a") // processing: dirty, not handed to the third Get
	select {
	case r := <-results:
		t.Fatalf("an item being processed was handed out again: %+v", r)
	case <-time.After(20 * time.Millisecond):
	}
	if waiting() != 1 {
		t.Fatalf("%d waiting Gets, want 1", waiting())
	}
	q.Done("a") // re-queued: goes to the waiting Get
	if r := <-results; r != (result{"a", false}) {
		t.Fatalf("Get after Done = %+v, want a", r)
	}
	go get()
	eventually(t, "a waiting Get", func() bool { return waiting() == 1 })
	q.ShutDown()
	if r := <-results; !r.shutdown {
		t.Fatalf("Get after ShutDown = %+v, want shutdown", r)
	}
	q.Done("a")
	q.Done("b")
	if err := q.ShutDownWithDrain(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestAddBetweenClaimAndTake adds an item again in the moment between a Get
// claiming it in the FIFO and Get returning it. Both outcomes keep the add: an
// add before the Get returns is seen by the processing that follows, so it may
// be merged into it (with metrics, where take records the get under the lock,
// as the queue always did) or count as made during processing, so Done queues
// the item again (without metrics: Add reads the claim from the FIFO). Either
// way the depth gauge must end equal to what is queued.
func TestAddBetweenClaimAndTake(t *testing.T) {
	t.Parallel()
	for _, metrics := range []bool{false, true} {
		opts := Options[string]{}
		reg := prometheus.NewRegistry()
		if metrics {
			opts = Options[string]{Name: "claim", MetricsProvider: NewPrometheusMetrics(reg), Clock: newFakeClock()}
		}
		q := New(opts)
		q.Add("x")
		s, ok := q.fifo.tryPop() // what Get does first
		if !ok {
			t.Fatal("nothing queued")
		}
		q.Add("x") // the Get has not returned yet
		if item := q.take(s); item != "x" {
			t.Fatalf("take = %q", item)
		}
		q.Done("x")
		want := 1
		if metrics {
			want = 0
		}
		if got := q.Len(); got != want {
			t.Fatalf("metrics=%v: Len() after Done = %d, want %d", metrics, got, want)
		}
		if metrics {
			if depth, _ := metricValue(t, reg, "workqueue_depth", "claim"); depth != 0 {
				t.Errorf("depth = %v with nothing queued, want 0", depth)
			}
			if adds, _ := metricValue(t, reg, "workqueue_adds_total", "claim"); adds != 1 {
				t.Errorf("adds = %v, want 1 (the second add was merged)", adds)
			}
		}
		q.ShutDown()
	}
}
