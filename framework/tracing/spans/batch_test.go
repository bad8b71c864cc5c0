package spans_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/converge-dev/converge/framework/tracing/otlpexport"
	"github.com/converge-dev/converge/framework/tracing/spans"
)

// recorder is an exporter that keeps what it is given, optionally waiting
// for release before each export returns.
type recorder struct {
	mu      sync.Mutex
	names   []string
	batches []int
	release chan struct{} // nil: no wait
}

func (r *recorder) Export(ctx context.Context, batch []*spans.Span) error {
	r.mu.Lock()
	for _, s := range batch {
		r.names = append(r.names, s.Name())
	}
	r.batches = append(r.batches, len(batch))
	r.mu.Unlock()
	if r.release != nil {
		select {
		case <-r.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (r *recorder) exported() (int, []int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.names), append([]int(nil), r.batches...)
}

func endSpans(tp trace.TracerProvider, n int) {
	tr := tp.Tracer("t")
	for range n {
		_, s := tr.Start(context.Background(), "s")
		s.End()
	}
}

// TestQueueFullDrops: with the exporter stuck, ending spans past the queue
// drops them (counted) without waiting.
func TestQueueFullDrops(t *testing.T) {
	t.Parallel()
	rec := &recorder{release: make(chan struct{})}
	tp := spans.New(spans.Options{Sampling: 1, Exporter: rec, QueueSize: 8, BatchSize: 4, Interval: time.Hour, Logger: testr.New(t)})
	start := time.Now()
	endSpans(tp, 1000)
	if d := time.Since(start); d > time.Second {
		t.Errorf("ending 1000 spans with the exporter stuck took %v", d)
	}
	// At most one batch in the exporter and a full queue; the rest dropped.
	if d := tp.Dropped(); d < 1000-8-4 || d > 1000-8 {
		t.Errorf("dropped %d of 1000 spans, want 988 to 992", d)
	}
	close(rec.release)
	if err := tp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n, _ := rec.exported(); uint64(n)+tp.Dropped() != 1000 {
		t.Errorf("exported %d and dropped %d of 1000", n, tp.Dropped())
	}
}

// TestShutdownFlushes: Shutdown exports everything queued, in batches of
// at most BatchSize; spans ended afterwards are dropped.
func TestShutdownFlushes(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	tp := spans.New(spans.Options{Sampling: 1, Exporter: rec, BatchSize: 512, Interval: time.Hour})
	endSpans(tp, 1500)
	if err := tp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	n, batches := rec.exported()
	if n != 1500 || tp.Dropped() != 0 {
		t.Fatalf("exported %d, dropped %d of 1500", n, tp.Dropped())
	}
	for _, b := range batches {
		if b > 512 {
			t.Errorf("a batch of %d spans", b)
		}
	}
	endSpans(tp, 1)
	if n, _ := rec.exported(); n != 1500 || tp.Dropped() != 1 {
		t.Errorf("after shutdown: exported %d, dropped %d", n, tp.Dropped())
	}
	if err := tp.ForceFlush(t.Context()); err == nil {
		t.Error("ForceFlush after Shutdown succeeded")
	}
}

// TestExportTriggers: a full batch is exported without waiting for the
// interval, a partial one at the interval, and ForceFlush exports at once.
func TestExportTriggers(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	tp := spans.New(spans.Options{Sampling: 1, Exporter: rec, BatchSize: 10, Interval: 300 * time.Millisecond})
	defer func() { _ = tp.Shutdown(context.Background()) }()
	endSpans(tp, 10)
	waitFor(t, time.Second/5, func() bool { n, _ := rec.exported(); return n == 10 }, "a full batch exported before the interval")
	endSpans(tp, 3)
	waitFor(t, 2*time.Second, func() bool { n, _ := rec.exported(); return n == 13 }, "a partial batch exported at the interval")
	endSpans(tp, 2)
	if err := tp.ForceFlush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n, _ := rec.exported(); n != 15 {
		t.Errorf("ForceFlush left %d of 15 spans unexported", 15-n)
	}
}

func waitFor(t *testing.T, d time.Duration, ok func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
	}
}

// TestDeadEndpoint: exporting to an endpoint nobody listens on neither
// blocks the spans' ends nor outlives Shutdown (no goroutine left once the
// exporter is closed).
func TestDeadEndpoint(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	exp, err := otlpexport.New(dead, "dead", testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	tp := spans.New(spans.Options{Sampling: 1, Exporter: exp, QueueSize: 64, BatchSize: 8, Interval: 10 * time.Millisecond, Logger: testr.New(t)})
	start := time.Now()
	endSpans(tp, 500)
	if d := time.Since(start); d > time.Second {
		t.Errorf("ending 500 spans took %v", d)
	}
	time.Sleep(100 * time.Millisecond) // exports fail and retry meanwhile
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	_ = tp.Shutdown(ctx) // the queued spans cannot go anywhere: cut short
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Shutdown took %v with a 300ms context", d)
	}
	if err := exp.Close(); err != nil {
		t.Fatal(err)
	}
}
