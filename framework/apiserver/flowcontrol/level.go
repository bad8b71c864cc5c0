package flowcontrol

import (
	"context"
	"time"

	"sync"
)

// maxHand bounds the hand size dealt (Kubernetes' validation keeps hands far
// smaller).
const maxHand = 32

// level is the run-time state of one limited priority level: its seats, its
// queues and the seats each flow holds. Its mutex is held only for counter
// updates and queue moves, never while a request runs.
type level struct {
	mu               sync.Mutex
	reject           bool
	limit, flowLimit int
	handSize         int
	queueLengthLimit int
	queues           []queue
	gen              uint64 // bumped when the queues are rebuilt
	executing        int
	waiting          int
	flows            map[uint64]int
	next             int // round-robin start of the dispatch scan
}

type queue struct {
	waiting   []*waiter
	executing int
}

// waiter is a queued request; ready is closed when it is given a seat.
type waiter struct {
	ready      chan struct{}
	flow       uint64
	capped     bool // the flow is held to its share of the seats
	queue      int
	dispatched bool
}

// ticket is a held seat; release gives it back.
type ticket struct {
	l      *level
	flow   uint64
	capped bool
	queue  int
	gen    uint64
}

func newLevel() *level { return &level{flows: map[uint64]int{}} }

// configure applies a level's configuration and limits; waiting requests are
// redistributed when the number of queues changes.
func (l *level) configure(pl *PriorityLevel, limit, flowPercent int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reject = pl.Reject
	l.limit = limit
	l.flowLimit = limit
	if flowPercent > 0 && flowPercent < 100 {
		l.flowLimit = max(1, limit*flowPercent/100)
	}
	queues := int(pl.Queues)
	if l.reject {
		queues = 0
	}
	l.handSize = min(max(int(pl.HandSize), 1), queues, maxHand)
	l.queueLengthLimit = int(pl.QueueLengthLimit)
	if queues != len(l.queues) {
		old := l.queues
		l.queues = make([]queue, queues)
		l.gen++
		l.waiting = 0
		for _, q := range old {
			for _, w := range q.waiting {
				if queues == 0 { // now a Reject level: run them rather than strand them
					w.dispatched = true
					l.startLocked(w.flow, w.capped, -1)
					w.queue = -1
					close(w.ready)
					continue
				}
				w.queue = l.chooseLocked(w.flow)
				l.queues[w.queue].waiting = append(l.queues[w.queue].waiting, w)
				l.waiting++
			}
		}
	}
	l.dispatchLocked()
}

// deal picks the flow's hand of queues by shuffle sharding: successive
// remainders of the hash draw cards without replacement from the deck of
// queues.
func deal(hash uint64, deck, handSize int, hand *[maxHand]int) int {
	n := min(handSize, deck, maxHand)
	var sorted [maxHand]int // cards drawn so far, ascending
	for i := range n {
		left := uint64(deck - i)
		card := int(hash % left)
		hash /= left
		// card is an index among the cards not yet drawn: skip the drawn ones.
		j := 0
		for ; j < i && sorted[j] <= card; j++ {
			card++
		}
		copy(sorted[j+1:i+1], sorted[j:i])
		sorted[j] = card
		hand[i] = card
	}
	return n
}

// chooseLocked is the shortest queue (waiting plus executing) of the flow's
// hand, the first on a tie; -1 without queues.
func (l *level) chooseLocked(flow uint64) int {
	if len(l.queues) == 0 {
		return -1
	}
	var hand [maxHand]int
	n := deal(flow, len(l.queues), l.handSize, &hand)
	best, bestLen := -1, 0
	for _, qi := range hand[:n] {
		q := &l.queues[qi]
		if n := len(q.waiting) + q.executing; best < 0 || n < bestLen {
			best, bestLen = qi, n
		}
	}
	return best
}

func (l *level) startLocked(flow uint64, capped bool, qi int) {
	l.executing++
	if qi >= 0 {
		l.queues[qi].executing++
	}
	if capped {
		l.flows[flow]++
	}
}

// underShareLocked reports whether a flow may take one more seat.
func (l *level) underShareLocked(flow uint64, capped bool) bool {
	return !capped || l.flows[flow] < l.flowLimit
}

// rejection says why a request got no seat.
type rejection string

const (
	rejectNoSeat    rejection = "the priority level has no free seat and does not queue"
	rejectQueueFull rejection = "the request's queue is full"
	rejectTimeout   rejection = "the request waited too long in its queue"
	rejectCancelled rejection = "the request was cancelled while in its queue"
)

// acquire takes a seat for flow, waiting in a queue up to wait when the level
// queues; a capped flow holds at most its share of the seats. The rejection is
// empty on success.
func (l *level) acquire(ctx context.Context, flow uint64, capped bool, wait time.Duration) (ticket, rejection) {
	l.mu.Lock()
	if l.waiting == 0 && l.executing < l.limit && l.underShareLocked(flow, capped) {
		// A request that runs at once counts against the first queue of its
		// hand (one division instead of dealing the whole hand).
		qi := -1
		if n := len(l.queues); n > 0 {
			qi = int(flow % uint64(n))
		}
		l.startLocked(flow, capped, qi)
		t := ticket{l: l, flow: flow, capped: capped, queue: qi, gen: l.gen}
		l.mu.Unlock()
		return t, ""
	}
	qi := l.chooseLocked(flow)
	if qi < 0 {
		l.mu.Unlock()
		return ticket{}, rejectNoSeat
	}
	q := &l.queues[qi]
	if len(q.waiting) >= l.queueLengthLimit {
		l.mu.Unlock()
		return ticket{}, rejectQueueFull
	}
	w := &waiter{ready: make(chan struct{}), flow: flow, capped: capped, queue: qi}
	q.waiting = append(q.waiting, w)
	l.waiting++
	l.dispatchLocked()
	l.mu.Unlock()

	timer := time.NewTimer(wait)
	defer timer.Stop()
	why := rejectTimeout
	select {
	case <-w.ready:
	case <-timer.C:
	case <-ctx.Done():
		why = rejectCancelled
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.dispatched {
		return ticket{l: l, flow: flow, capped: capped, queue: w.queue, gen: l.gen}, ""
	}
	q = &l.queues[w.queue]
	for i, x := range q.waiting {
		if x == w {
			q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
			l.waiting--
			break
		}
	}
	return ticket{}, why
}

// release gives t's seat back and serves the queues.
func (t ticket) release() {
	l := t.l
	if l == nil {
		return
	}
	l.mu.Lock()
	l.executing--
	if t.gen == l.gen && t.queue >= 0 && l.queues[t.queue].executing > 0 {
		l.queues[t.queue].executing--
	}
	if t.capped {
		if n := l.flows[t.flow] - 1; n <= 0 {
			delete(l.flows, t.flow)
		} else {
			l.flows[t.flow] = n
		}
	}
	if l.waiting > 0 {
		l.dispatchLocked()
	}
	l.mu.Unlock()
}

// dispatchLocked gives free seats to queued requests: the head of the
// non-empty queue with the fewest executing requests whose flow is under its
// share, ties in round-robin order.
func (l *level) dispatchLocked() {
	n := len(l.queues)
	for l.waiting > 0 && l.executing < l.limit {
		best := -1
		for k := range n {
			i := (l.next + k) % n
			q := &l.queues[i]
			if len(q.waiting) == 0 || !l.underShareLocked(q.waiting[0].flow, q.waiting[0].capped) {
				continue
			}
			if best < 0 || q.executing < l.queues[best].executing {
				best = i
			}
		}
		if best < 0 {
			return
		}
		q := &l.queues[best]
		w := q.waiting[0]
		q.waiting[0] = nil
		q.waiting = q.waiting[1:]
		l.waiting--
		w.dispatched = true
		l.startLocked(w.flow, w.capped, best)
		close(w.ready)
		l.next = (best + 1) % n
	}
}
