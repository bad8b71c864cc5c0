package workqueue

import (
	"context"
	"hash/maphash"
	"sync"
)

// Item states. An item with neither flag is idle: it may keep its slot for a while
// (see maxIdle) or have none.
const (
	stateDirty      uint8 = 1 << iota // waiting to be handed to Get
	stateProcessing                   // handed out by Get, Done not yet called
)

// maxIdle is how many idle items keep their slot. An item that comes back while its
// slot is kept costs one index probe per Add and per Done instead of an insertion
// and a deletion; the oldest idle slot is released once more are idle.
const maxIdle = 1024

// slot is the record of an item that is dirty, processing, or recently idle. Slots are
// reused through a free list, and the FIFO holds slot numbers, so Get needs no hashing
// and a warmed queue never allocates.
type slot[T comparable] struct {
	item  T
	hash  uint64 // of item, under the queue's seed
	state uint8
	gen   uint32 // bumped each time the item becomes idle; matches its idle entry
}

// idleEntry records that a slot became idle; it is stale once the slot's gen moved on
// or the slot is in use again.
type idleEntry struct {
	id  int32
	gen uint32
}

// waiter is a Get blocked on an empty queue. Add and Done hand an item to the
// oldest waiter directly, already marked processing, so the woken Get returns
// without taking the lock again; ShutDown sends shutdown to every waiter. ch has
// room for the one message a waiter ever receives, so senders never block.
type waiter[T comparable] struct {
	ch chan handoff[T]
}

type handoff[T comparable] struct {
	item     T
	shutdown bool
}

// Typed is a work queue of items of type T; see the package documentation for its
// contract. Create it with New. All methods are safe for concurrent use.
//
// One lock guards the state, and it is held only for table and list updates:
// items are hashed before it is taken, and a Get that had to wait is handed its
// item instead of competing for the lock again when woken.
type Typed[T comparable] struct {
	// mu guards the fields from queue to metrics. It is never held together with
	// delay.mu or a rate limiter's lock.
	mu sync.Mutex

	queue        ring[int32]      // slots of dirty items not being processed, FIFO
	index        index            // slot of each item that is dirty, processing or kept idle
	slots        []slot[T]        // indexed by slot number
	free         []int32          // unused slot numbers
	idle         ring[idleEntry]  // slots that became idle, oldest first; at most maxIdle
	waiting      ring[*waiter[T]] // blocked Gets, oldest first; non-empty only if queue is
	dirty        int              // number of dirty items (queued or dirty while processing)
	processing   int              // number of processing items
	shuttingDown bool             // no more adds; Get returns shutdown once queue is empty
	drained      chan struct{}    // closed when processing reaches 0 after a ShutDownWithDrain
	metrics      *queueMetrics[T] // nil when metrics are disabled

	seed    maphash.Seed
	waiters sync.Pool // of *waiter[T], reused across Gets

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
		seed:        maphash.MakeSeed(),
		stop:        make(chan struct{}),
		clock:       opts.Clock,
		rateLimiter: opts.RateLimiter,
	}
	q.waiters.New = func() any { return &waiter[T]{ch: make(chan handoff[T], 1)} }
	if q.clock == nil {
		q.clock = RealClock{}
	}
	if q.rateLimiter == nil {
		q.rateLimiter = DefaultControllerRateLimiter[T]()
	}
	q.delay.init()
	if opts.MetricsProvider != nil && opts.Name != "" {
		q.metrics = newQueueMetrics[T](opts.MetricsProvider.NewQueueMetrics(opts.Name), q.clock)
		go q.updateUnfinishedWorkLoop(q.clock.NewTimer(unfinishedWorkPeriod))
	}
	return q
}

// Add marks item as needing processing. An item that is already waiting is not added
// again (stingy); an item that is being processed is queued again when its worker
// calls Done, never handed to a second worker. Add does nothing after ShutDown.
func (q *Typed[T]) Add(item T) {
	h := maphash.Comparable(q.seed, item)
	q.mu.Lock()
	if q.shuttingDown {
		q.mu.Unlock()
		return
	}
	id, ok := indexGet(&q.index, h, item, q.slots)
	if ok {
		s := &q.slots[id]
		if s.state&stateDirty != 0 {
			q.mu.Unlock()
			return
		}
		wasIdle := s.state == 0
		s.state |= stateDirty
		q.dirty++
		if q.metrics != nil {
			q.metrics.add(item, q.dirty)
		}
		if !wasIdle { // processing: Done queues it again
			q.mu.Unlock()
			return
		}
		q.ready(id) // unlocks
		return
	}
	if n := len(q.free); n > 0 {
		id = q.free[n-1]
		q.free = q.free[:n-1]
		s := &q.slots[id]
		s.item, s.hash, s.state = item, h, stateDirty
	} else {
		id = int32(len(q.slots))
		q.slots = append(q.slots, slot[T]{item: item, hash: h, state: stateDirty})
	}
	q.index.put(h, id)
	q.dirty++
	if q.metrics != nil {
		q.metrics.add(item, q.dirty)
	}
	q.ready(id) // unlocks
}

// ready makes the dirty slot id available to Get: it hands the item to the oldest
// waiting Get, or queues it. The caller holds q.mu; ready releases it, and sends
// to the waiter after unlocking, so that the woken Get does not find the lock held.
func (q *Typed[T]) ready(id int32) {
	if q.waiting.n == 0 {
		q.queue.push(id)
		q.mu.Unlock()
		return
	}
	w := q.waiting.pop()
	item := q.take(id)
	q.mu.Unlock()
	w.ch <- handoff[T]{item: item}
}

// take marks the dirty slot id processing and returns its item; q.mu is held.
func (q *Typed[T]) take(id int32) T {
	s := &q.slots[id]
	s.state = stateProcessing
	q.dirty--
	q.processing++
	if q.metrics != nil {
		q.metrics.get(s.item, q.dirty)
	}
	return s.item
}

// Get blocks until an item is available and returns it; the caller owns the item
// until it calls Done(item). Items come out in the order they were first added. Once
// the queue is shut down and empty, Get returns the zero T and shutdown == true.
//
// Get takes no context: a consumer's lifetime is the queue's, and the owner ends it
// with ShutDown (typically when its own context ends).
func (q *Typed[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	if q.queue.n > 0 {
		item = q.take(q.queue.pop())
		q.mu.Unlock()
		return item, false
	}
	if q.shuttingDown {
		q.mu.Unlock()
		return item, true
	}
	w := q.waiters.Get().(*waiter[T])
	q.waiting.push(w)
	q.mu.Unlock()
	h := <-w.ch
	q.waiters.Put(w)
	return h.item, h.shutdown
}

// Done marks item as processed. If it was added again while being processed, it is
// queued again now. Done for an item that is not being processed does nothing.
func (q *Typed[T]) Done(item T) {
	h := maphash.Comparable(q.seed, item)
	q.mu.Lock()
	id, ok := indexGet(&q.index, h, item, q.slots)
	if !ok || q.slots[id].state&stateProcessing == 0 {
		q.mu.Unlock()
		return
	}
	q.processing--
	if q.metrics != nil {
		q.metrics.done(item)
	}
	s := &q.slots[id]
	if s.state&stateDirty == 0 {
		s.state = 0
		s.gen++
		q.idle.push(idleEntry{id: id, gen: s.gen})
		if q.idle.n > maxIdle {
			q.release(q.idle.pop())
		}
	} else {
		s.state = stateDirty
	}
	if q.processing == 0 && q.drained != nil {
		close(q.drained)
		q.drained = nil
	}
	if s.state == stateDirty {
		q.ready(id) // unlocks
		return
	}
	q.mu.Unlock()
}

// release frees the slot of an idle entry unless the entry is stale.
func (q *Typed[T]) release(e idleEntry) {
	s := &q.slots[e.id]
	if s.state != 0 || s.gen != e.gen {
		return
	}
	q.index.remove(s.hash, e.id)
	s.item = *new(T)
	q.free = append(q.free, e.id)
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

// shutDownLocked starts shutdown; q.mu is held. Waiting Gets exist only while the
// queue is empty, so they all return shutdown.
func (q *Typed[T]) shutDownLocked() {
	if q.shuttingDown {
		return
	}
	q.shuttingDown = true
	close(q.stop)
	for q.waiting.n > 0 {
		q.waiting.pop().ch <- handoff[T]{shutdown: true}
	}
}
