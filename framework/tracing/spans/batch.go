package spans

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
)

// batcher queues ended spans and exports them from one goroutine: when a
// batch is full, every interval, on flush and on shutdown. Ending a span
// takes one uncontended lock and never waits for the exporter.
type batcher struct {
	exp      Exporter
	log      logr.Logger
	max      int
	size     int
	interval time.Duration
	timeout  time.Duration

	mu      sync.Mutex
	queue   []*Span // at most max spans
	stopped bool
	dropped atomic.Uint64

	full    chan struct{}      // a batch is ready (capacity 1)
	flushes chan chan struct{} // ForceFlush: closed when done
	stop    chan struct{}      // closed by shutdown
	done    chan struct{}      // closed when the goroutine ends
	cancel  context.CancelFunc // cancels the export in progress
}

func newBatcher(o Options) *batcher {
	b := &batcher{exp: o.Exporter, log: o.Logger, max: o.QueueSize, size: o.BatchSize, interval: o.Interval, timeout: o.ExportTimeout,
		full: make(chan struct{}, 1), flushes: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	if b.max <= 0 {
		b.max = 2048
	}
	if b.size <= 0 {
		b.size = 512
	}
	b.size = min(b.size, b.max)
	if b.interval <= 0 {
		b.interval = 5 * time.Second
	}
	if b.timeout <= 0 {
		b.timeout = 30 * time.Second
	}
	b.queue = make([]*Span, 0, b.max)
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	go b.run(ctx)
	return b
}

// enqueue queues s, or drops it when the queue is full or stopped.
func (b *batcher) enqueue(s *Span) {
	b.mu.Lock()
	if b.stopped || len(b.queue) == b.max {
		b.mu.Unlock()
		b.dropped.Add(1)
		return
	}
	b.queue = append(b.queue, s)
	n := len(b.queue)
	b.mu.Unlock()
	if n == b.size {
		select {
		case b.full <- struct{}{}:
		default:
		}
	}
}

// run exports until stop is closed, then exports what is left.
func (b *batcher) run(ctx context.Context) {
	defer close(b.done)
	batch := make([]*Span, 0, b.size)
	tick := time.NewTimer(b.interval)
	defer tick.Stop()
	var reported uint64
	for {
		all := true
		var flushed chan struct{}
		select {
		case <-b.full:
			all = false
		case <-tick.C:
		case flushed = <-b.flushes:
		case <-b.stop:
			batch = b.export(ctx, batch, true)
			return
		}
		batch = b.export(ctx, batch, all)
		if flushed != nil {
			close(flushed)
		}
		if d := b.dropped.Load(); d != reported {
			b.log.Info("spans dropped: the export queue was full", "dropped", d-reported, "total", d)
			reported = d
		}
		tick.Reset(b.interval)
	}
}

// export exports the queue in batches: all of it, or while a full batch is
// queued.
func (b *batcher) export(ctx context.Context, batch []*Span, all bool) []*Span {
	for {
		b.mu.Lock()
		n := len(b.queue)
		if n == 0 || (!all && n < b.size) {
			b.mu.Unlock()
			return batch
		}
		n = min(n, b.size)
		batch = append(batch[:0], b.queue[:n]...)
		rest := copy(b.queue, b.queue[n:])
		clear(b.queue[rest:])
		b.queue = b.queue[:rest]
		b.mu.Unlock()
		ectx, cancel := context.WithTimeout(ctx, b.timeout)
		if err := b.exp.Export(ectx, batch); err != nil {
			b.log.Error(err, "export spans", "spans", len(batch))
		}
		cancel()
		clear(batch) // the spans are garbage now
		if ctx.Err() != nil {
			return batch
		}
	}
}

// flush exports what is queued.
func (b *batcher) flush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case b.flushes <- done:
	case <-b.done:
		return errShutdown
	case <-ctx.Done():
		return fmt.Errorf("spans: flush: %w", ctx.Err())
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("spans: flush: %w", ctx.Err())
	}
}

// shutdown stops queueing, exports what is queued and stops the goroutine;
// when ctx ends first, it cancels the export.
func (b *batcher) shutdown(ctx context.Context) error {
	b.mu.Lock()
	first := !b.stopped
	b.stopped = true
	b.mu.Unlock()
	if first {
		close(b.stop)
	}
	select {
	case <-b.done:
		b.cancel()
		return nil
	case <-ctx.Done():
		b.cancel()
		<-b.done
		return fmt.Errorf("spans: shut down: %w", ctx.Err())
	}
}
