package workqueue

import (
	"container/heap"
	"sync"
	"time"
)

// delayState holds items waiting for AddAfter's deadline: a min-heap ordered by
// deadline (then by arrival), an index for deduplication, and one goroutine that adds
// due items to the queue. The goroutine starts on the first delayed add and ends at
// ShutDown.
type delayState[T comparable] struct {
	mu      sync.Mutex // guards heap, seq and started; never held with Typed.mu
	heap    waitHeap[T]
	seq     uint64
	started bool
	wake    chan struct{} // capacity 1: a new earliest deadline
}

func (d *delayState[T]) init() {
	d.heap.index = make(map[T]int)
	d.wake = make(chan struct{}, 1)
}

// AddAfter adds item to the queue once d has elapsed; d <= 0 adds it now. While an
// item waits, a later AddAfter with an earlier deadline moves it forward and one with
// a later deadline is ignored: the earliest deadline wins. An item waiting here is not
// dirty yet, so a plain Add is independent of it. Waiting items are dropped at
// ShutDown. Each call counts as a retry in the metrics, as in client-go.
func (q *Typed[T]) AddAfter(item T, d time.Duration) {
	select {
	case <-q.stop:
		return
	default:
	}
	if q.metrics != nil {
		q.metrics.retry() // atomic in the Prometheus counter: no lock needed
	}
	if d <= 0 {
		q.Add(item)
		return
	}
	at := q.clock.Now().Add(d)
	ds := &q.delay
	ds.mu.Lock()
	defer ds.mu.Unlock()
	h := &ds.heap
	if i, ok := h.index[item]; ok {
		if !at.Before(h.entries[i].at) {
			return
		}
		h.entries[i].at = at
		heap.Fix(h, i)
	} else {
		ds.seq++
		h.entries = append(h.entries, waitEntry[T]{item: item, at: at, seq: ds.seq})
		n := len(h.entries) - 1
		h.index[item] = n
		heap.Fix(h, n) // sift up the new leaf without boxing it into heap.Push's any
	}
	if !ds.started {
		ds.started = true
		go q.delayLoop()
		return
	}
	if h.index[item] == 0 {
		select {
		case ds.wake <- struct{}{}:
		default:
		}
	}
}

// delayLoop moves due items into the queue and sleeps until the next deadline, a new
// earliest deadline, or ShutDown.
func (q *Typed[T]) delayLoop() {
	ds := &q.delay
	var (
		timer Timer
		ready []T
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		ds.mu.Lock()
		now := q.clock.Now()
		for len(ds.heap.entries) > 0 && !ds.heap.entries[0].at.After(now) {
			ready = append(ready, ds.heap.popMin())
		}
		wait := time.Duration(-1)
		if len(ds.heap.entries) > 0 {
			wait = ds.heap.entries[0].at.Sub(now)
		}
		ds.mu.Unlock()

		for _, item := range ready {
			q.Add(item)
		}
		clear(ready) // do not keep items reachable
		ready = ready[:0]

		var fire <-chan time.Time
		if wait > 0 {
			if timer == nil {
				timer = q.clock.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			fire = timer.C()
		}
		select {
		case <-q.stop:
			return
		case <-ds.wake:
		case <-fire:
		}
	}
}

type waitEntry[T comparable] struct {
	item T
	at   time.Time
	seq  uint64 // arrival order, breaks ties between equal deadlines
}

// waitHeap implements heap.Interface; index maps each item to its position.
type waitHeap[T comparable] struct {
	entries []waitEntry[T]
	index   map[T]int
}

var _ heap.Interface = (*waitHeap[string])(nil)

func (h *waitHeap[T]) Len() int { return len(h.entries) }

func (h *waitHeap[T]) Less(i, j int) bool {
	a, b := &h.entries[i], &h.entries[j]
	if a.at.Equal(b.at) {
		return a.seq < b.seq
	}
	return a.at.Before(b.at)
}

func (h *waitHeap[T]) Swap(i, j int) {
	h.entries[i], h.entries[j] = h.entries[j], h.entries[i]
	h.index[h.entries[i].item] = i
	h.index[h.entries[j].item] = j
}

// Push and Pop satisfy heap.Interface; the queue itself uses append+Fix and popMin,
// which do not box entries.
func (h *waitHeap[T]) Push(x any) {
	e := x.(waitEntry[T])
	h.index[e.item] = len(h.entries)
	h.entries = append(h.entries, e)
}

func (h *waitHeap[T]) Pop() any {
	n := len(h.entries) - 1
	e := h.entries[n]
	h.entries[n] = waitEntry[T]{}
	h.entries = h.entries[:n]
	delete(h.index, e.item)
	return e
}

// popMin removes and returns the item with the earliest deadline.
func (h *waitHeap[T]) popMin() T {
	n := len(h.entries) - 1
	h.Swap(0, n)
	item := h.entries[n].item
	h.entries[n] = waitEntry[T]{}
	h.entries = h.entries[:n]
	delete(h.index, item)
	if n > 0 {
		heap.Fix(h, 0)
	}
	return item
}
