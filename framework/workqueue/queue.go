package workqueue

import (
	"context"
	"sync"
)

// Item states, kept in one map so that each operation costs at most two hash
// lookups. An item absent from the map is neither dirty nor processing.
const (
	stateDirty      uint8 = 1 << iota // waiting to be handed to Get
	stateProcessing                   // handed out by Get, Done not yet called
)

// Typed is a work queue of items of type T; see the package documentation for its
// contract. Create it with New. All methods are safe for concurrent use.
type Typed[T comparable] struct {
	// mu guards everything below it. Lock order: delayMu may be held when taking mu,
	// never the reverse; the rate limiter's lock is never held with either.
	mu   sync.Mutex
	cond sync.Cond // signalled when an item is queued or shutdown starts

	queue        ring[T]      // dirty items not being processed, FIFO
	state        map[T]uint8  // dirty and processing flags, absent = neither
	dirty        int          // number of dirty items (queued or dirty while processing)
	processing   int          // number of processing items
	waiters      int          // goroutines blocked in Get
	shuttingDown bool         // no more adds; Get returns shutdown once queue is empty
	drained      chan struct{} // closed when processing reaches 0 after a ShutDownWithDrain
	metrics      *queueMetrics[T] // nil when metrics are disabled

	stop chan struct{} // closed by the first ShutDown; stops background goroutines

	clock       Clock
	rateLimiter RateLimiter[T]

	delay delayState[T] // AddAfter's heap and timer goroutine, started lazily
}

// New returns an empty queue configured by opts. It starts a background goroutine
// only when metrics are enabled; AddAfter starts one more on first use. Both end
// after ShutDown.
func New[T comparable](opts Options[T]) *Typed[T] {
	q := &Typed[T]{
		state:       make(map[T]uint8),
		stop:        make(chan struct{}),
		clock:       opts.Clock,
		rateLimiter: opts.RateLimiter,
	}
	q.cond.L = &q.mu
	if q.clock == nil {
		q.clock = RealClock{}
	}
	if q.rateLimiter == nil {
		q.rateLimiter = DefaultControllerRateLimiter[T]()
	}
	q.delay.init()
	if opts.MetricsProvider != nil && opts.Name != "" {
		q.metrics = newQueueMetrics[T](opts.MetricsProvider.NewQueueMetrics(opts.Name), q.clock)
		go q.updateUnfinishedWorkLoop()
	}
	return q
}

// Add marks item as needing processing. An item that is already waiting is not added
// again (stingy); an item that is being processed is queued again when its worker
// calls Done, never handed to a second worker. Add does nothing after ShutDown.
func (q *Typed[T]) Add(item T) {
	q.mu.Lock()
	if q.shuttingDown {
		q.mu.Unlock()
		return
	}
	s := q.state[item]
	if s&stateDirty != 0 {
		q.mu.Unlock()
		return
	}
	q.state[item] = s | stateDirty
	q.dirty++
	if q.metrics != nil {
		q.metrics.add(item, q.dirty)
	}
	if s&stateProcessing == 0 {
		q.queue.push(item)
		if q.waiters > 0 {
			q.cond.Signal()
		}
	}
	q.mu.Unlock()
}

// Get blocks until an item is available and returns it; the caller owns the item
// until it calls Done(item). Items come out in the order they were first added. Once
// the queue is shut down and empty, Get returns the zero T and shutdown == true.
//
// Get takes no context: a consumer's lifetime is the queue's, and the owner ends it
// with ShutDown (typically when its own context ends).
func (q *Typed[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	for q.queue.n == 0 && !q.shuttingDown {
		q.waiters++
		q.cond.Wait()
		q.waiters--
	}
	if q.queue.n == 0 {
		q.mu.Unlock()
		return item, true
	}
	item = q.queue.pop()
	q.state[item] = stateProcessing
	q.dirty--
	q.processing++
	if q.metrics != nil {
		q.metrics.get(item, q.dirty)
	}
	q.mu.Unlock()
	return item, false
}

// Done marks item as processed. If it was added again while being processed, it is
// queued again now. Done for an item that is not being processed does nothing.
func (q *Typed[T]) Done(item T) {
	q.mu.Lock()
	s := q.state[item]
	if s&stateProcessing == 0 {
		q.mu.Unlock()
		return
	}
	q.processing--
	if q.metrics != nil {
		q.metrics.done(item)
	}
	if s&stateDirty != 0 {
		q.state[item] = stateDirty
		q.queue.push(item)
		if q.waiters > 0 {
			q.cond.Signal()
		}
	} else {
		delete(q.state, item)
	}
	if q.processing == 0 && q.drained != nil {
		close(q.drained)
		q.drained = nil
	}
	q.mu.Unlock()
}

// Len returns the number of items waiting to be handed out by Get, not counting
// items that are dirty while being processed or waiting in AddAfter.
func (q *Typed[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queue.n
}

// ShutDown stops the queue: later adds are ignored, delayed items are dropped,
// blocked and later Gets return the items still queued and then shutdown == true.
// It does not wait for workers. Calling it more than once is harmless.
func (q *Typed[T]) ShutDown() {
	q.mu.Lock()
	q.shutDownLocked()
	q.mu.Unlock()
}

// ShutDownWithDrain shuts the queue down like ShutDown and then waits until no item
// handed out by Get is still being processed (every one was marked Done). Items still
// queued are not waited for: workers keep getting them until the queue is empty. It
// returns ctx.Err() if ctx ends first; the queue stays shut down either way.
func (q *Typed[T]) ShutDownWithDrain(ctx context.Context) error {
	q.mu.Lock()
	q.shutDownLocked()
	if q.processing == 0 {
		q.mu.Unlock()
		return nil
	}
	if q.drained == nil {
		q.drained = make(chan struct{})
	}
	drained := q.drained
	q.mu.Unlock()
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain has been called.
func (q *Typed[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}

func (q *Typed[T]) shutDownLocked() {
	if q.shuttingDown {
		return
	}
	q.shuttingDown = true
	close(q.stop)
	q.cond.Broadcast()
}
