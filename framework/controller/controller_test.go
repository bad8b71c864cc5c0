package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/goleak"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/workqueue"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every wait for something the controller must do: generous, as
// the tests share a loaded machine and run under -race.
const wait = 10 * time.Second

func key(name string) reconcile.Request {
	return reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: name}}
}

// memSource is an in-memory Source: it hands the controller's queue to the
// test, which adds keys the way an informer's event handler would.
type memSource struct{ queues chan handler.Queue }

func newMemSource() *memSource { return &memSource{queues: make(chan handler.Queue, 1)} }

func (s *memSource) Start(_ context.Context, q handler.Queue) error {
	s.queues <- q
	return nil
}

// recordingLimiter is a real per-key exponential rate limiter that records
// the backoffs it hands out and the keys it forgets.
type recordingLimiter struct {
	workqueue.RateLimiter[reconcile.Request]

	mu      sync.Mutex
	whens   []time.Duration
	forgets int
}

func newRecordingLimiter(base time.Duration) *recordingLimiter {
	return &recordingLimiter{RateLimiter: workqueue.NewItemExponentialFailureRateLimiter[reconcile.Request](base, time.Minute)}
}

func (l *recordingLimiter) When(r reconcile.Request) time.Duration {
	d := l.RateLimiter.When(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.whens = append(l.whens, d)
	return d
}

func (l *recordingLimiter) Forget(r reconcile.Request) {
	l.RateLimiter.Forget(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forgets++
}

func (l *recordingLimiter) backoffs() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Duration(nil), l.whens...)
}

func (l *recordingLimiter) forgotten() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.forgets
}

// running is a started controller.
type running struct {
	name  string
	reg   *prometheus.Registry
	queue handler.Queue
	stop  func() error // ends the controller's ctx and returns what Start returned
}

// start runs a controller named after the test over r until the test ends.
func start(t *testing.T, r reconcile.Reconciler, opts controller.Options) *running {
	t.Helper()
	name := strings.ReplaceAll(t.Name(), "/", "_")
	reg := prometheus.NewRegistry()
	opts.Registry = reg
	c, err := controller.New(name, r, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	src := newMemSource()
	if err := c.Watch(src); err != nil {
		t.Fatalf("Watch: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	var stopOnce sync.Once
	var stopErr error
	stop := func() error {
		stopOnce.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(wait):
				stopErr = errors.New("Start did not return after its ctx ended")
			}
		})
		return stopErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	select {
	case q := <-src.queues:
		return &running{name: name, reg: reg, queue: q, stop: stop}
	case err := <-done:
		t.Fatalf("Start returned before starting its source: %v", err)
	case <-time.After(wait):
		t.Fatal("the controller did not start its source")
	}
	return nil
}

// metric returns the value of one series as /metrics serves it, e.g.
// `controller_runtime_reconcile_errors_total{controller="x"}`; the series
// must be exported.
func (r *running) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	series := name + `{controller="` + r.name + `"`
	for i := 0; i+1 < len(labels); i += 2 {
		series += "," + labels[i] + `="` + labels[i+1] + `"`
	}
	series += "} "
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for line := range strings.SplitSeq(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, series); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no series %s in:\n%s", series, rec.Body.String())
	return 0
}

// results returns the reconcile_total series per result label.
func (r *running) results(t *testing.T) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, res := range []string{"success", "error", "requeue_after"} {
		out[res] = r.metric(t, "controller_runtime_reconcile_total", "result", res)
	}
	return out
}

// calls records when each reconcile started.
type calls struct {
	mu    sync.Mutex
	times []time.Time
	more  chan struct{} // one value per call
}

func newCalls() *calls { return &calls{more: make(chan struct{}, 1000)} }

// add records a call and returns its number, from 1.
func (c *calls) add() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.times = append(c.times, time.Now())
	c.more <- struct{}{}
	return len(c.times)
}

func (c *calls) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.times)
}

// gaps returns the time between consecutive calls.
func (c *calls) gaps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var g []time.Duration
	for i := 1; i < len(c.times); i++ {
		g = append(g, c.times[i].Sub(c.times[i-1]))
	}
	return g
}

// await waits until n calls were made in all.
func (c *calls) await(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(wait)
	for c.count() < n {
		select {
		case <-c.more:
		case <-deadline:
			t.Fatalf("%d reconciles after %s, want %d", c.count(), wait, n)
		}
	}
}

// quiet checks that no further call is made for a while.
func (c *calls) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	n := c.count()
	time.Sleep(d)
	if got := c.count(); got != n {
		t.Fatalf("%d reconciles, want still %d", got, n)
	}
}

func TestErrorRequeuesWithGrowingBackoffUntilSuccessForgets(t *testing.T) {
	t.Parallel()
	const failures = 4
	var fail atomic.Int32
	fail.Store(failures)
	calls := newCalls()
	limiter := newRecordingLimiter(10 * time.Millisecond)
	r := start(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		calls.add()
		if fail.Add(-1) >= 0 {
			return reconcile.Result{RequeueAfter: time.Hour}, errors.New("boom") // Result is ignored
		}
		return reconcile.Result{}, nil
	}), controller.Options{RateLimiter: limiter})

	r.queue.Add(key("a"))
	calls.await(t, failures+1)
	calls.quiet(t, 100*time.Millisecond)

	want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond}
	if diff := cmp.Diff(want, limiter.backoffs()); diff != "" {
		t.Fatalf("backoffs handed out (-want +got):\n%s", diff)
	}
	for i, g := range calls.gaps() {
		if g < want[i] {
			t.Errorf("retry %d came %s after the failure, before its backoff of %s", i+1, g, want[i])
		}
	}
	if n := limiter.NumRequeues(key("a")); n != 0 {
		t.Errorf("NumRequeues after success = %d, want 0 (forgotten)", n)
	}
	if diff := cmp.Diff(map[string]float64{"success": 1, "error": failures, "requeue_after": 0}, r.results(t)); diff != "" {
		t.Errorf("reconcile_total by result (-want +got):\n%s", diff)
	}
	if got := r.metric(t, "controller_runtime_reconcile_errors_total"); got != failures {
		t.Errorf("reconcile_errors_total = %v, want %d", got, failures)
	}
	if got := r.metric(t, "controller_runtime_terminal_reconcile_errors_total"); got != 0 {
		t.Errorf("terminal_reconcile_errors_total = %v, want 0", got)
	}
	if got := r.metric(t, "controller_runtime_reconcile_time_seconds_count"); got != failures+1 {
		t.Errorf("reconcile_time_seconds_count = %v, want %d", got, failures+1)
	}

	// The success reset the backoff: the next failure starts again at the base.
	fail.Store(1)
	r.queue.Add(key("a"))
	calls.await(t, failures+3)
	if got := limiter.backoffs(); got[len(got)-1] != 10*time.Millisecond {
		t.Errorf("backoffs after a success = %v, want the last to restart at 10ms", got)
	}
}

func TestOutcomesThatAreNotRetried(t *testing.T) {
	t.Parallel()
	notFound := apierrors.NewNotFound(api.GroupResource{Resource: "configmaps"}, "a")
	for _, tc := range []struct {
		name     string
		err      error
		results  map[string]float64
		errors   float64
		terminal float64
	}{
		{
			name:     "a terminal error is counted but not retried",
			err:      fmt.Errorf("reconcile: %w", reconcile.TerminalError(errors.New("bad spec"))),
			results:  map[string]float64{"success": 0, "error": 1, "requeue_after": 0},
			errors:   1,
			terminal: 1,
		},
		{
			name:    "a NotFound is a success",
			err:     fmt.Errorf("get parent: %w", notFound),
			results: map[string]float64{"success": 1, "error": 0, "requeue_after": 0},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls := newCalls()
			limiter := newRecordingLimiter(time.Millisecond)
			r := start(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				calls.add()
				return reconcile.Result{}, tc.err
			}), controller.Options{RateLimiter: limiter})

			r.queue.Add(key("a"))
			calls.await(t, 1)
			calls.quiet(t, 200*time.Millisecond)
			if got := limiter.backoffs(); len(got) != 0 {
				t.Errorf("the key was rate limited: backoffs %v", got)
			}
			if limiter.forgotten() == 0 {
				t.Error("the key's backoff was not forgotten")
			}
			if diff := cmp.Diff(tc.results, r.results(t)); diff != "" {
				t.Errorf("reconcile_total by result (-want +got):\n%s", diff)
			}
			if got := r.metric(t, "controller_runtime_reconcile_errors_total"); got != tc.errors {
				t.Errorf("reconcile_errors_total = %v, want %v", got, tc.errors)
			}
			if got := r.metric(t, "controller_runtime_terminal_reconcile_errors_total"); got != tc.terminal {
				t.Errorf("terminal_reconcile_errors_total = %v, want %v", got, tc.terminal)
			}

			// A new event enqueues the key again.
			r.queue.Add(key("a"))
			calls.await(t, 2)
		})
	}
}

func TestRequeueAfterReconcilesAgainAfterTheDelay(t *testing.T) {
	t.Parallel()
	const after = 150 * time.Millisecond
	calls := newCalls()
	limiter := newRecordingLimiter(time.Millisecond)
	r := start(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		if calls.add() == 1 {
			return reconcile.Result{RequeueAfter: after}, nil
		}
		return reconcile.Result{}, nil
	}), controller.Options{RateLimiter: limiter})

	r.queue.Add(key("a"))
	calls.await(t, 2)
	calls.quiet(t, 100*time.Millisecond)
	if g := calls.gaps()[0]; g < after {
		t.Errorf("requeued after %s, want at least %s", g, after)
	}
	if got := limiter.backoffs(); len(got) != 0 {
		t.Errorf("RequeueAfter went through the rate limiter: backoffs %v", got)
	}
	if got := limiter.forgotten(); got != 2 {
		t.Errorf("Forget calls = %d, want 2 (RequeueAfter resets the backoff too)", got)
	}
	if diff := cmp.Diff(map[string]float64{"success": 1, "error": 0, "requeue_after": 1}, r.results(t)); diff != "" {
		t.Errorf("reconcile_total by result (-want +got):\n%s", diff)
	}
}

func TestPanicIsRecoveredCountedAndRetried(t *testing.T) {
	t.Parallel()
	var logs lines
	calls := newCalls()
	others := make(chan string, 1)
	limiter := newRecordingLimiter(time.Millisecond)
	r := start(t, reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		if req.Name != "a" {
			others <- req.Name
		} else if calls.add() <= 2 {
			panic("nil map")
		}
		return reconcile.Result{}, nil
	}), controller.Options{RateLimiter: limiter, Logger: logs.logger()})

	r.queue.Add(key("a"))
	calls.await(t, 3)
	calls.quiet(t, 100*time.Millisecond)
	if got := limiter.backoffs(); len(got) != 2 {
		t.Errorf("backoffs = %v, want 2: a panic is retried like an error", got)
	}
	if got := r.metric(t, "controller_runtime_reconcile_panics_total"); got != 2 {
		t.Errorf("reconcile_panics_total = %v, want 2", got)
	}
	if got := r.metric(t, "controller_runtime_reconcile_errors_total"); got != 2 {
		t.Errorf("reconcile_errors_total = %v, want 2", got)
	}
	if diff := cmp.Diff(map[string]float64{"success": 1, "error": 2, "requeue_after": 0}, r.results(t)); diff != "" {
		t.Errorf("reconcile_total by result (-want +got):\n%s", diff)
	}
	panics := logs.find("Observed a panic in reconciler")
	if len(panics) != 2 {
		t.Fatalf("%d panic log lines, want 2", len(panics))
	}
	if st, _ := panics[0]["stack"].(string); !strings.Contains(st, "controller_test.TestPanicIsRecoveredCountedAndRetried") {
		t.Errorf("the panic log's stack does not name the panicking reconciler:\n%s", st)
	}
	if got := logs.find("Reconciler error; retrying with backoff"); len(got) != 2 ||
		!strings.Contains(fmt.Sprint(got[0]["error"]), "panic in reconciler: nil map [recovered]") {
		t.Errorf("retry log lines = %v, want 2 naming the recovered panic", got)
	}

	// The worker survived: other keys are reconciled.
	r.queue.Add(key("b"))
	select {
	case <-others:
	case <-time.After(wait):
		t.Fatal("no reconcile after the panics")
	}
}

// lines collects a logger's JSON lines.
type lines struct {
	mu  sync.Mutex
	all []map[string]any
}

func (l *lines) logger() logr.Logger {
	return funcr.NewJSON(func(obj string) {
		var m map[string]any
		if err := json.Unmarshal([]byte(obj), &m); err != nil {
			m = map[string]any{"unparsed": obj}
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.all = append(l.all, m)
	}, funcr.Options{Verbosity: 1})
}

// find returns the lines with message msg.
func (l *lines) find(msg string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, m := range l.all {
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func TestContextCarriesLoggerAndReconcileID(t *testing.T) {
	t.Parallel()
	var logs lines
	calls := newCalls()
	deadlines := make(chan error, 10)
	r := start(t, reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		logr.FromContextOrDiscard(ctx).Info("from the reconciler")
		calls.add()
		if req.Name == "slow" {
			<-ctx.Done()
			deadlines <- ctx.Err()
		}
		return reconcile.Result{}, nil
	}), controller.Options{Logger: logs.logger(), ReconciliationTimeout: 100 * time.Millisecond})

	r.queue.Add(key("a"))
	calls.await(t, 1)
	r.queue.Add(key("a"))
	calls.await(t, 2)
	got := logs.find("from the reconciler")
	if len(got) != 2 {
		t.Fatalf("%d lines from the reconciler, want 2", len(got))
	}
	ids := map[string]bool{}
	for _, l := range got {
		for k, want := range map[string]string{"controller": r.name, "namespace": "ns", "name": "a"} {
			if l[k] != want {
				t.Errorf("log key %q = %v, want %q (line %v)", k, l[k], want, l)
			}
		}
		id, _ := l["reconcileID"].(string)
		if _, err := uuid.Parse(id); err != nil {
			t.Errorf("reconcileID %q is not a UUID: %v", id, err)
		}
		ids[id] = true
	}
	if len(ids) != 2 {
		t.Errorf("reconcileIDs %v, want one per reconcile", ids)
	}

	// ReconciliationTimeout ends the ctx of a reconcile that runs too long.
	r.queue.Add(key("slow"))
	select {
	case err := <-deadlines:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("the slow reconcile's ctx ended with %v, want DeadlineExceeded", err)
		}
	case <-time.After(wait):
		t.Fatal("ReconciliationTimeout did not end the reconcile's ctx")
	}
}

// gate blocks reconciles until released (or their ctx ends) and tracks how
// many run at once.
type gate struct {
	release chan struct{}
	entered chan string

	mu      sync.Mutex
	running int
	most    int
}

func newGate() *gate {
	return &gate{release: make(chan struct{}), entered: make(chan string, 1000)}
}

func (g *gate) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	g.mu.Lock()
	g.running++
	g.most = max(g.most, g.running)
	g.mu.Unlock()
	g.entered <- req.Name
	select {
	case <-g.release:
	case <-ctx.Done():
	}
	g.mu.Lock()
	g.running--
	g.mu.Unlock()
	return reconcile.Result{}, nil
}

func (g *gate) await(t *testing.T, n int) []string {
	t.Helper()
	var keys []string
	for range n {
		select {
		case k := <-g.entered:
			keys = append(keys, k)
		case <-time.After(wait):
			t.Fatalf("%d reconciles entered, want %d", len(keys), n)
		}
	}
	return keys
}

func TestMaxConcurrentReconciles(t *testing.T) {
	t.Parallel()
	const workers = 3
	g := newGate()
	r := start(t, g, controller.Options{MaxConcurrentReconciles: workers})
	if got := r.metric(t, "controller_runtime_max_concurrent_reconciles"); got != workers {
		t.Errorf("max_concurrent_reconciles = %v, want %d", got, workers)
	}
	for i := range 10 {
		r.queue.Add(key(fmt.Sprint("k", i)))
	}
	g.await(t, workers)
	select {
	case k := <-g.entered:
		t.Fatalf("key %s entered while %d workers were busy", k, workers)
	case <-time.After(200 * time.Millisecond):
	}
	if got := r.metric(t, "controller_runtime_active_workers"); got != workers {
		t.Errorf("active_workers = %v, want %d", got, workers)
	}
	close(g.release)
	g.await(t, 10-workers)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.most != workers {
		t.Errorf("at most %d reconciles ran at once, want %d", g.most, workers)
	}
}

func TestOneKeyIsNeverReconciledConcurrently(t *testing.T) {
	t.Parallel()
	var inFlight, overlaps atomic.Int32
	calls := newCalls()
	var q handler.Queue
	qReady := make(chan struct{})
	r := start(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		if inFlight.Add(1) > 1 {
			overlaps.Add(1)
		}
		defer inFlight.Add(-1)
		<-qReady
		if calls.add() <= 20 {
			q.Add(key("a")) // an event for the key while it is being reconciled
		}
		time.Sleep(time.Millisecond)
		return reconcile.Result{}, nil
	}), controller.Options{MaxConcurrentReconciles: 4})
	q = r.queue
	close(qReady)

	// More events from elsewhere while the key is reconciled.
	stop := make(chan struct{})
	var adders sync.WaitGroup
	for range 3 {
		adders.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					r.queue.Add(key("a"))
					time.Sleep(500 * time.Microsecond)
				}
			}
		})
	}
	calls.await(t, 21)
	close(stop)
	adders.Wait()
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("key a was reconciled by two workers at once %d times", n)
	}
	// The key is still reconciled after all those adds.
	n := calls.count()
	r.queue.Add(key("a"))
	calls.await(t, n+1)
}

func TestShutdownWaitsForRunningReconcilesAndDropsQueuedKeys(t *testing.T) {
	t.Parallel()
	g := newGate()
	var returned atomic.Int32
	r := start(t, reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := g.Reconcile(ctx, req)
		time.Sleep(50 * time.Millisecond) // the reconcile takes a while to wind down
		returned.Add(1)
		return res, err
	}), controller.Options{MaxConcurrentReconciles: 2})
	for i := range 6 {
		r.queue.Add(key(fmt.Sprint("k", i)))
	}
	g.await(t, 2)
	if err := r.stop(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if got := returned.Load(); got != 2 {
		t.Errorf("Start returned with %d of 2 running reconciles finished", got)
	}
	select {
	case k := <-g.entered:
		t.Errorf("queued key %s was reconciled after the controller stopped", k)
	default:
	}
	// The queue is shut down: adds after the stop are ignored.
	r.queue.Add(key("late"))
	select {
	case k := <-g.entered:
		t.Errorf("key %s was reconciled after the controller stopped", k)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestStartRunsOnce(t *testing.T) {
	t.Parallel()
	c, err := controller.New("once", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{}, nil
	}), controller.Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("first Start: %v", err)
	}
	if err := c.Start(t.Context()); !errors.Is(err, controller.ErrStarted) {
		t.Fatalf("second Start = %v, want ErrStarted", err)
	}
}

// neverSynced is a SyncingSource whose cache never syncs.
type neverSynced struct{ memSource }

func (neverSynced) WaitForSync(ctx context.Context) bool {
	<-ctx.Done()
	return false
}

func TestStartFailsWhenASourceDoesNotSync(t *testing.T) {
	t.Parallel()
	calls := newCalls()
	c, err := controller.New("unsynced", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		calls.add()
		return reconcile.Result{}, nil
	}), controller.Options{CacheSyncTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	src := &neverSynced{*newMemSource()}
	if err := c.Watch(src); err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if err := c.Start(t.Context()); !errors.Is(err, controller.ErrCacheSync) {
		t.Fatalf("Start = %v, want ErrCacheSync", err)
	}
	(<-src.queues).Add(key("a"))
	if n := calls.count(); n != 0 {
		t.Errorf("%d reconciles without synced sources, want 0", n)
	}
}

func TestNewValidatesAllOptions(t *testing.T) {
	t.Parallel()
	_, err := controller.New("", nil, controller.Options{ReconciliationTimeout: -time.Second})
	if err == nil {
		t.Fatal("New accepted an empty name, a nil reconciler and a negative timeout")
	}
	for _, want := range []string{"name is required", "reconciler is required", "ReconciliationTimeout must not be negative"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("New error %q does not say %q", err, want)
		}
	}
}

func TestReconcileSpan(t *testing.T) {
	t.Parallel()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	calls := newCalls()
	var inReconcile atomic.Value
	r := start(t, reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		inReconcile.Store(trace.SpanContextFromContext(ctx))
		defer calls.add()
		if req.Name == "bad" {
			return reconcile.Result{}, reconcile.TerminalError(errors.New("bad spec"))
		}
		return reconcile.Result{RequeueAfter: time.Hour}, nil
	}), controller.Options{TracerProvider: tp})
	r.queue.Add(key("a"))
	calls.await(t, 1)
	r.queue.Add(key("bad"))
	calls.await(t, 2)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	ended := spans.Ended()
	if len(ended) != 2 {
		t.Fatalf("%d spans ended, want 2", len(ended))
	}
	for i, want := range []struct {
		name string
		err  bool
	}{{"a", false}, {"bad", true}} {
		s := ended[i]
		attrs := map[string]string{}
		for _, kv := range s.Attributes() {
			attrs[string(kv.Key)] = kv.Value.Emit()
		}
		if s.Name() != "Reconcile "+r.name || attrs["controller"] != r.name || attrs["namespace"] != "ns" || attrs["name"] != want.name {
			t.Errorf("span %d: %q %v", i, s.Name(), attrs)
		}
		if got := s.Status().Code == codes.Error; got != want.err {
			t.Errorf("span %d (%s): error status %v, want %v", i, want.name, got, want.err)
		}
	}
	if sc, _ := inReconcile.Load().(trace.SpanContext); sc.SpanID() != ended[1].SpanContext().SpanID() {
		t.Errorf("the reconciler's ctx carries span %s, want the reconcile span %s", sc.SpanID(), ended[1].SpanContext().SpanID())
	}
	if a := ended[0].Attributes(); !slices.ContainsFunc(a, func(kv attribute.KeyValue) bool { return kv.Key == "requeueAfter" && kv.Value.Emit() == "1h0m0s" }) {
		t.Errorf("span of a: attributes %v, want requeueAfter 1h0m0s", a)
	}
}

func TestLastError(t *testing.T) {
	t.Parallel()
	calls := newCalls()
	var ctrl *controller.Controller
	r := reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		defer calls.add()
		switch req.Name {
		case "bad":
			return reconcile.Result{}, reconcile.TerminalError(errors.New("bad spec"))
		case "gone":
			return reconcile.Result{}, apierrors.NewNotFound(api.GroupResource{Resource: "things"}, "gone")
		}
		return reconcile.Result{}, nil
	})
	c, err := controller.New("last-error", r, controller.Options{Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	ctrl = c
	if msg, _ := ctrl.LastError(); msg != "" {
		t.Fatalf("LastError before any reconcile = %q", msg)
	}
	src := newMemSource()
	if err := ctrl.Watch(src); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- ctrl.Start(ctx) }()
	defer func() { cancel(); <-done }()
	q := <-src.queues
	before := time.Now()
	q.Add(key("bad"))
	calls.await(t, 1)
	q.Add(key("ok"))
	q.Add(key("gone"))
	calls.await(t, 3)
	deadline := time.Now().Add(wait)
	for {
		msg, at := ctrl.LastError()
		if msg != "" {
			if !strings.Contains(msg, "bad spec") || at.Before(before) {
				t.Fatalf("LastError = %q at %v; want the terminal error, after %v (success and NotFound leave it)", msg, at, before)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("LastError stayed empty after a failed reconcile")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
