package workqueue

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// Item states. An item with neither flag is idle: it may keep its slot for a while
// (see maxIdle) or have none.
const (
	stateDirty      uint32 = 1 << iota // waiting to be handed to Get
	stateProcessing                    // handed out by Get, Done not yet called
)

// Shards. Items are spread over numShards shards by hash; each shard keeps the
// bookkeeping of its items (index, slots, states) under its own lock, so that
// goroutines working on different items rarely wait for each other. The order
// in which items are handed out is kept by one FIFO shared by all shards.
const (
	shardBits  = 4
	numShards  = 1 << shardBits
	shardShift = 64 - shardBits // a shard is chosen by the top bits of an item's hash
)

// maxIdle is how many idle items keep their slot, over all shards. An item that
// comes back while its slot is kept costs one index probe per Add and per Done
// instead of an insertion and a deletion. A slot is listed in its shard's idle
// ring when its item first becomes idle and stays listed while the item comes
// and goes; once more than maxIdle/numShards slots of a shard are listed, the
// oldest listing is dropped and its slot released if its item is idle (an item
// in use is listed again when it next becomes idle).
const maxIdle = 2048

const maxIdlePerShard = maxIdle / numShards

// slot is the record of an item that is dirty, processing, or recently idle. Slots are
// reused through a free list and never move, and the FIFO holds pointers to them, so
// Get needs no hashing and no lock, and a warmed queue never allocates.
//
// Get neither locks nor writes a slot (unless metrics are on): it only reads the
// item, which was written before the slot was queued. A queued slot (state ==
// stateDirty) becomes processing when a Get claims its FIFO position; Add and Done,
// which hold the shard's lock, learn of it from the FIFO (stateOf) and record it
// then. With metrics, Get records it itself under the lock (take). Keeping
// Get's hand-off free of stores to the slot saves a locked instruction and a
// cache-line transfer per item when producers and consumers run on different
// CPUs. All fields but spilledPos are written under the shard's lock; Get
// reads item without it.
type slot[T comparable] struct {
	item       T
	hash       uint64        // of item, under the queue's seed
	pos        uint64        // FIFO ring position of the slot's last push, unless spilled
	spilledPos atomic.Uint64 // its FIFO position if spilled (see fifo.moved)
	state      uint32        // stateDirty and stateProcessing bits
	shard      uint8         // the shard the slot belongs to
	listed     bool          // in its shard's idle ring
	spilled    bool          // the last push went to the FIFO's overflow list
	times      slotTimes     // for the metrics; zero when they are disabled
}

// slotChunk is how many slots are allocated at once; chunks never move.
const slotChunk = 64

// shard holds the bookkeeping of the items whose hash selects it.
type shard[T comparable] struct {
	_ [64]byte // keep neighbouring shards' locks off one cache line

	mu     sync.Mutex
	index  index       // slot number of each item that is dirty, processing or kept idle
	chunks [][]slot[T] // slot number i is chunks[i/slotChunk][i%slotChunk]
	nslots int32       // slot numbers handed out so far
	free   []int32     // unused slot numbers
	idle   ring[int32] // listed slots (see maxIdle), oldest listing first
}

// slot returns slot number id; sh.mu is held.
func (sh *shard[T]) slot(id int32) *slot[T] { return &sh.chunks[id/slotChunk][id%slotChunk] }

// newSlot returns an unused slot number, from the free list or a new one.
func (sh *shard[T]) newSlot() int32 {
	if n := len(sh.free); n > 0 {
		id := sh.free[n-1]
		sh.free = sh.free[:n-1]
		return id
	}
	id := sh.nslots
	if id%slotChunk == 0 {
		sh.chunks = append(sh.chunks, make([]slot[T], slotChunk))
	}
	sh.nslots++
	return id
}

// Typed is a work queue of items of type T; see the package documentation for its
// contract. Create it with New. All methods are safe for concurrent use.
type Typed[T comparable] struct {
	shards [numShards]shard[T]
	fifo   fifo[*slot[T]] // dirty items not being processed, oldest first

	shuttingDown atomic.Bool   // no more adds; Get returns shutdown once the FIFO is empty
	draining     atomic.Bool   // a ShutDownWithDrain is waiting for processing items
	drainWake    chan struct{} // capacity 1: a processing item was marked Done while draining
	waiting      atomic.Int32  // Gets blocked on an empty FIFO
	stop         chan struct{} // closed by the first ShutDown; stops the background goroutines
	stopOnce     sync.Once

	seed    maphash.Seed
	metrics *queueMetrics // nil when metrics are disabled
	depth   atomic.Int64  // dirty items over all shards; kept only with metrics

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
		drainWake:   make(chan struct{}, 1),
		clock:       opts.Clock,
		rateLimiter: opts.RateLimiter,
	}
	q.fifo.init()
	q.fifo.moved = func(s *slot[T], pos uint64) { s.spilledPos.Store(pos) }
	if q.clock == nil {
		q.clock = RealClock{}
	}
	if q.rateLimiter == nil {
		q.rateLimiter = DefaultControllerRateLimiter[T]()
	}
	q.delay.init()
	if opts.MetricsProvider != nil && opts.Name != "" {
		m := opts.MetricsProvider.NewQueueMetrics(opts.Name)
		q.metrics = newQueueMetrics(m, q.clock)
		go q.updateUnfinishedWorkLoop(q.clock.NewTimer(unfinishedWorkPeriod))
	}
	return q
}

// shardOf returns the shard of an item with hash h and its number.
func (q *Typed[T]) shardOf(h uint64) (*shard[T], int) {
	i := int(h >> shardShift)
	return &q.shards[i], i
}

// Add marks item as needing processing. An item that is already waiting is not added
// again (stingy); an item that is being processed is queued again when its worker
// calls Done, never handed to a second worker. Add does nothing after ShutDown.
func (q *Typed[T]) Add(item T) {
	if q.shuttingDown.Load() {
		return
	}
	h := maphash.Comparable(q.seed, item)
	sh, si := q.shardOf(h)
	sh.mu.Lock()
	if id, ok := indexGet(sh, h, item); ok {
		s := sh.slot(id)
		state := q.stateOf(s)
		if state&stateDirty != 0 {
			// Queued: the Get that takes it starts processing after this Add.
			sh.mu.Unlock()
			return
		}
		s.state = state | stateDirty
		q.countAdd(s)
		if state == 0 {
			q.push(s)
		} // else processing: Done queues it again
		sh.mu.Unlock()
		return
	}
	id := sh.newSlot()
	s := sh.slot(id)
	s.item, s.hash, s.shard = item, h, uint8(si)
	s.state = stateDirty
	sh.index.put(h, id)
	q.countAdd(s)
	q.push(s)
	sh.mu.Unlock()
}

// stateOf returns the state of s, first recording that a Get has taken it if
// it was queued and a Get has claimed its FIFO position; s's shard's lock is
// held. With metrics, take records it under the lock with the get's
// timestamps, and until then the item counts as queued: an Add in between is
// one the coming processing sees, as it would be just before the claim.
func (q *Typed[T]) stateOf(s *slot[T]) uint32 {
	if s.state != stateDirty || q.metrics != nil {
		return s.state
	}
	pos := s.pos
	if s.spilled {
		pos = s.spilledPos.Load()
	}
	if q.fifo.claimed(pos) {
		s.state = stateProcessing
	}
	return s.state
}

// push queues s; its shard's lock is held.
func (q *Typed[T]) push(s *slot[T]) {
	pos, inRing := q.fifo.push(s)
	s.pos, s.spilled = pos, !inRing
}

// countAdd records the item of s becoming dirty in the metrics; its shard's
// lock is held.
func (q *Typed[T]) countAdd(s *slot[T]) {
	if q.metrics != nil {
		q.metrics.add(&s.times, int(q.depth.Add(1)))
	}
}

// Get blocks until an item is available and returns it; the caller owns the item
// until it calls Done(item). Items come out in the order they were first added. Once
// the queue is shut down and empty, Get returns the zero T and shutdown == true.
//
// Get takes no context: a consumer's lifetime is the queue's, and the owner ends it
// with ShutDown (typically when its own context ends).
func (q *Typed[T]) Get() (item T, shutdown bool) {
	s, ok := q.fifo.tryPop()
	for !ok {
		if q.shuttingDown.Load() {
			return item, true
		}
		q.waiting.Add(1)
		s, ok = q.fifo.pop()
		q.waiting.Add(-1)
		if !ok {
			return item, true
		}
	}
	return q.take(s), false
}

// take returns the item of the slot s that Get popped from the FIFO. The pop
// made the item processing (see stateOf), so without metrics take writes
// nothing.
func (q *Typed[T]) take(s *slot[T]) T {
	item := s.item
	if q.metrics == nil {
		return item
	}
	// With metrics, under the lock: an Add that follows then sees the item
	// processing and stamps its own add time, which this get must not clear.
	sh := &q.shards[s.shard]
	sh.mu.Lock()
	s.state = stateProcessing
	q.metrics.get(&s.times, int(q.depth.Add(-1)))
	sh.mu.Unlock()
	return item
}

// Done marks item as processed. If it was added again while being processed, it is
// queued again now. Done for an item that is not being processed does nothing.
func (q *Typed[T]) Done(item T) {
	h := maphash.Comparable(q.seed, item)
	sh, _ := q.shardOf(h)
	sh.mu.Lock()
	id, ok := indexGet(sh, h, item)
	if !ok {
		sh.mu.Unlock()
		return
	}
	s := sh.slot(id)
	state := q.stateOf(s)
	if state&stateProcessing == 0 {
		sh.mu.Unlock()
		return
	}
	if q.metrics != nil {
		q.metrics.done(&s.times)
	}
	if state&stateDirty != 0 {
		s.state = stateDirty
		q.push(s)
	} else {
		s.state = 0
		if !s.listed {
			s.listed = true
			sh.idle.push(id)
			if sh.idle.n > maxIdlePerShard {
				sh.unlistOldest()
			}
		}
	}
	sh.mu.Unlock()
	if q.draining.Load() {
		select {
		case q.drainWake <- struct{}{}:
		default:
		}
	}
}

// unlistOldest drops the oldest listing of the idle ring and releases its slot
// if the slot's item is idle; sh.mu is held.
func (sh *shard[T]) unlistOldest() {
	id := sh.idle.pop()
	s := sh.slot(id)
	s.listed = false
	if s.state != 0 {
		return
	}
	sh.index.remove(s.hash, id)
	s.item, s.times = *new(T), slotTimes{}
	sh.free = append(sh.free, id)
}

// Len returns the number of items waiting to be handed out by Get, not counting
// items that are dirty while being processed or waiting in AddAfter.
func (q *Typed[T]) Len() int { return q.fifo.len() }

// ShutDown stops the queue: later adds are ignored, delayed items are dropped,
// blocked and later Gets return the items still queued and then shutdown == true.
// It does not wait for workers. Calling it more than once is harmless.
func (q *Typed[T]) ShutDown() {
	q.stopOnce.Do(func() {
		q.shuttingDown.Store(true)
		q.fifo.close()
		close(q.stop)
	})
}

// ShutDownWithDrain shuts the queue down like ShutDown and then waits until no item
// handed out by Get is still being processed (every one was marked Done). Items still
// queued are not waited for: workers keep getting them until the queue is empty. It
// returns ctx.Err() if ctx ends first; the queue stays shut down either way.
func (q *Typed[T]) ShutDownWithDrain(ctx context.Context) error {
	q.ShutDown()
	q.draining.Store(true) // before counting: a Done after the count then wakes us
	for q.processing() > 0 {
		select {
		case <-q.drainWake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// processing counts the items handed out by Get and not yet Done. It looks at
// every slot: Get keeps no count, to stay cheap, and this runs only while a
// ShutDownWithDrain waits.
func (q *Typed[T]) processing() int {
	n := 0
	for i := range q.shards {
		sh := &q.shards[i]
		sh.mu.Lock()
		for id := range sh.nslots {
			if q.stateOf(sh.slot(id))&stateProcessing != 0 {
				n++
			}
		}
		sh.mu.Unlock()
	}
	return n
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain has been called.
func (q *Typed[T]) ShuttingDown() bool { return q.shuttingDown.Load() }
