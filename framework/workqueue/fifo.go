package workqueue

import (
	"sync"
	"sync/atomic"
)

// ringSize is how many elements the FIFO's lock-free ring holds; more wait in its
// overflow list. A power of two.
const ringSize = 1024

// fifo is the queue's first-in first-out list of queued slots: unbounded, safe for
// concurrent use, and without a lock on its common paths.
//
// Elements travel through a bounded ring in which producers and consumers claim
// positions with a compare-and-swap and each cell carries a sequence number saying
// whose turn it is (the design of Dmitry Vyukov's bounded MPMC queue). A lock would
// be held only for nanoseconds, but with more producers and consumers than CPUs
// sync.Mutex parks every goroutine that finds it held, and each park and wake-up
// costs more than the work it protects; the ring has nothing to park on.
//
// Elements that do not fit go to an overflow list under a lock and move into the
// ring, oldest first, as room appears; while the list holds any, new elements queue
// behind them, so the order is kept. A pop on an empty FIFO sleeps on a condition
// variable, which a push signals only when someone sleeps.
type fifo[E any] struct {
	_    [64]byte
	tail atomic.Uint64 // next position to push
	_    [56]byte
	head atomic.Uint64 // next position to pop
	_    [56]byte
	ring [ringSize]cell[E]

	mu       sync.Mutex // guards overflow, closed; the cond's lock
	overflow ring[E]    // elements that did not fit in the ring, oldest first
	spilled  atomic.Int32
	closed   bool
	sleepers atomic.Int32 // pops waiting on nonEmpty and not yet signalled; changed under mu
	nonEmpty sync.Cond

	// moved, if set, follows the elements that push could not put in the
	// ring: it is told posOverflow before such an element joins the overflow
	// list, its ring position when it moves into the ring (before it is
	// published there), and posTaken when a pop takes it straight from the
	// list. push reports the position of the others itself. With positions,
	// claimed tells whether a pop has taken an element, so the queue's Get
	// need not write anything to mark an item taken.
	moved func(e E, pos uint64)
}

// Positions given to moved besides ring positions.
const (
	posOverflow = ^uint64(0)     // waiting in the overflow list
	posTaken    = ^uint64(0) - 1 // popped straight from the overflow list
)

// claimed reports whether the element last put at pos has been taken by a
// pop (or is being taken: its pop has claimed the position). A pop claims
// ring position p by moving head past it.
func (f *fifo[E]) claimed(pos uint64) bool {
	return pos == posTaken || (pos != posOverflow && f.head.Load() > pos)
}

// cell is one position of the ring. seq == pos: free for the push at pos;
// seq == pos+1: holds the element pushed at pos, for the pop at pos.
type cell[E any] struct {
	seq atomic.Uint64
	val E
}

func (f *fifo[E]) init() {
	for i := range f.ring {
		f.ring[i].seq.Store(uint64(i))
	}
	f.nonEmpty.L = &f.mu
}

// ringPush appends e to the ring and returns its position; it fails when the
// ring is full. onto, if set, is called with the position before e is
// published there.
func (f *fifo[E]) ringPush(e E, onto func(E, uint64)) (uint64, bool) {
	pos := f.tail.Load()
	for {
		c := &f.ring[pos%ringSize]
		switch seq := c.seq.Load(); {
		case seq == pos:
			if f.tail.CompareAndSwap(pos, pos+1) {
				if onto != nil {
					onto(e, pos)
				}
				c.val = e
				c.seq.Store(pos + 1)
				return pos, true
			}
			pos = f.tail.Load()
		case seq < pos: // the pop of the previous round has not freed the cell: full
			return 0, false
		default: // another push took pos
			pos = f.tail.Load()
		}
	}
}

// ringPop removes the oldest element of the ring; it fails when the ring is empty
// or its oldest push has claimed a position but not yet stored its element (that
// push then wakes sleepers itself).
func (f *fifo[E]) ringPop() (e E, ok bool) {
	pos := f.head.Load()
	for {
		c := &f.ring[pos%ringSize]
		switch seq := c.seq.Load(); {
		case seq == pos+1:
			if f.head.CompareAndSwap(pos, pos+1) {
				e = c.val
				var zero E
				c.val = zero
				c.seq.Store(pos + ringSize)
				return e, true
			}
			pos = f.head.Load()
		case seq < pos+1: // empty
			return e, false
		default: // another pop took pos
			pos = f.head.Load()
		}
	}
}

// push appends e. It returns e's ring position and true if e went straight
// into the ring; otherwise e waits in the overflow list, and moved follows it.
func (f *fifo[E]) push(e E) (pos uint64, inRing bool) {
	if f.spilled.Load() == 0 {
		pos, inRing = f.ringPush(e, nil)
	}
	if !inRing {
		f.mu.Lock()
		if f.moved != nil {
			f.moved(e, posOverflow)
		}
		f.overflow.push(e)
		f.refillLocked()
		f.mu.Unlock()
	}
	if f.sleepers.Load() > 0 {
		f.wakeOne()
	}
	return pos, inRing
}

// wakeOne signals one sleeping pop, if any. Each sleeper is signalled once: the
// count drops here, not when it wakes, so pushes that follow do not take the lock
// to signal it again while it waits for the lock to return.
func (f *fifo[E]) wakeOne() {
	f.mu.Lock()
	if f.sleepers.Load() > 0 {
		f.sleepers.Add(-1)
		f.nonEmpty.Signal()
	}
	f.mu.Unlock()
}

// refillLocked moves overflow elements into the ring while it has room; f.mu is
// held. Everyone who adds to the overflow list, and every pop that finds it not
// empty, calls it, so no element stays behind while the ring has room: spilled is
// published before each push is tried, so a pop that made room after a failed
// try sees it.
func (f *fifo[E]) refillLocked() {
	for f.overflow.n > 0 {
		f.spilled.Store(int32(f.overflow.n))
		if _, ok := f.ringPush(f.overflow.buf[f.overflow.head], f.moved); !ok {
			return
		}
		f.overflow.pop()
	}
	f.spilled.Store(0)
}

// popOverflowLocked removes the oldest element of the overflow list, which the
// caller has checked is not empty; f.mu is held.
func (f *fifo[E]) popOverflowLocked() E {
	e := f.overflow.pop()
	if f.moved != nil {
		f.moved(e, posTaken)
	}
	return e
}

// tryPop removes and returns the oldest element, if there is one.
func (f *fifo[E]) tryPop() (e E, ok bool) {
	if e, ok = f.ringPop(); ok {
		if f.spilled.Load() != 0 {
			f.mu.Lock()
			f.refillLocked()
			f.mu.Unlock()
		}
		return e, true
	}
	if f.spilled.Load() == 0 {
		return e, false
	}
	// The ring is empty but the list is not (its refill raced with our pop): the
	// list's oldest element is the oldest of all.
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok = f.ringPop(); !ok && f.overflow.n > 0 {
		e, ok = f.popOverflowLocked(), true
	}
	f.refillLocked()
	return e, ok
}

// pop waits for the oldest element; it returns false once the FIFO is closed and
// empty.
func (f *fifo[E]) pop() (e E, ok bool) {
	for slept := false; ; slept = true {
		if e, ok = f.tryPop(); ok {
			if slept {
				f.passOn()
			}
			return e, true
		}
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return f.tryPop()
		}
		// Announce the sleeper before looking again: a push that stored its
		// element after our look sees it and signals.
		f.sleepers.Add(1)
		if e, ok = f.ringPop(); !ok && f.overflow.n > 0 {
			e, ok = f.popOverflowLocked(), true
			f.refillLocked()
		}
		if ok {
			f.sleepers.Add(-1)
		} else {
			f.nonEmpty.Wait() // signalled or closed: the count no longer includes us
		}
		f.mu.Unlock()
		if ok {
			if f.spilled.Load() != 0 {
				f.mu.Lock()
				f.refillLocked()
				f.mu.Unlock()
			}
			return e, true
		}
	}
}

// passOn wakes another sleeper if elements are left after a woken pop took one.
// A push signals one sleeper, but a pop that looked while an earlier push had
// claimed its position and not yet stored its element went to sleep though a
// later element was there; the pop woken for the earlier element wakes it.
func (f *fifo[E]) passOn() {
	if f.len() > 0 && f.sleepers.Load() > 0 {
		f.wakeOne()
	}
}

// close wakes every waiting pop; pops of an empty FIFO return false from then on.
// Pushes still work.
func (f *fifo[E]) close() {
	f.mu.Lock()
	f.closed = true
	f.sleepers.Store(0)
	f.nonEmpty.Broadcast()
	f.mu.Unlock()
}

// len returns the number of elements held.
func (f *fifo[E]) len() int {
	n := int64(f.tail.Load()) - int64(f.head.Load())
	return max(int(n), 0) + int(f.spilled.Load())
}
