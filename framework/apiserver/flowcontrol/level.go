package flowcontrol

import (
	"context"
	"math"
	"sync"
	"time"
)

// maxHand bounds the hand size dealt (Kubernetes' validation keeps hands far
// smaller).
const maxHand = 32

// serviceEstimate is the service time fair queuing charges a request before
// it finishes (Kubernetes' estimatedServiceDuration); the charge is corrected
// by the actual time when it finishes.
const serviceEstimate = 3 * time.Millisecond

// level is the run-time state of one priority level: its seats, its queues,
// its virtual time and the seats each capped flow holds. Its mutex is held
// only for counter updates and queue moves, never while a request runs.
type level struct {
	mu               sync.Mutex
	exempt, reject   bool
	limit            int // current limit (seats)
	nominal          int
	flowLimit        int // a capped flow's share: flowPercent of the nominal limit
	flowPercent      int
	handSize         int
	queueLengthLimit int
	queues           []queue
	gen              uint64 // bumped when the queues are rebuilt
	seats            int    // seats held by executing (or lingering) requests
	executing        int    // requests holding seats
	waiting          int    // queued requests
	seatsWaiting     int    // seats the queued requests ask for
	flows            map[uint64]int
	robin            int // round-robin start of the dispatch scan
	enqueues         int // rotates the scan of a hand (ties between queues)

	// Virtual time (fair queuing): vt advances, per unit of real time, by
	// the seats the busy queues could use (at most the limit) divided
	// between them: the work each busy queue would have been served.
	epoch       time.Time
	last        int64   // ns since epoch of the last advance
	vt          float64 // seat-nanoseconds
	active      int     // queues with waiting or executing requests
	queuedSeats int     // seats in use by, plus asked by waiting requests of, the queues

	demand integrator // seats in use plus seats waiting, over time
}

type queue struct {
	waiting      []*waiter
	executing    int
	seats        int     // seats held by its executing requests
	waitingSeats int     // seats its waiting requests ask for
	waitingWork  float64 // virtual work of its waiting requests
	nextR        float64 // virtual start of its next request
}

func (q *queue) busy() bool { return len(q.waiting) > 0 || q.executing > 0 }

// estimate is a request's width, as Kubernetes' WorkEstimate: it holds
// max(initial, final) seats while it runs and, when latency > 0, for latency
// after it (the watch notifications a write causes).
type estimate struct {
	initial, final int
	latency        time.Duration
}

func (e estimate) seats() int { return max(e.initial, e.final) }

// work is the request's cost in virtual time: seats × estimated service time
// plus final seats × additional latency.
func (e estimate) work() float64 {
	return float64(e.initial)*float64(serviceEstimate) + float64(e.final)*float64(e.latency)
}

// waiter is a queued request; ready is closed when it is given its seats.
type waiter struct {
	ready      chan struct{}
	flow       uint64
	capped     bool // the flow is held to its share of the seats
	queue      int
	est        estimate
	arrivalR   float64
	dispatched bool
	start      int64
	gen        uint64 // of the queues it was dispatched from
}

// ticket is a request's held seats; finish gives them back.
type ticket struct {
	l      *level
	flow   uint64
	capped bool
	queue  int
	gen    uint64
	est    estimate
	start  int64
}

func newLevel() *level { return &level{flows: map[uint64]int{}, epoch: time.Now()} }

func (l *level) now() int64 { return int64(time.Since(l.epoch)) }

// configure applies a level's configuration and nominal limit; waiting
// requests are redistributed when the number of queues changes.
func (l *level) configure(pl *PriorityLevel, nominal, flowPercent int) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.advanceLocked(now)
	l.exempt = pl.Exempt
	l.reject = pl.Reject || pl.Exempt
	l.nominal, l.flowPercent = nominal, flowPercent
	l.setFlowLimitLocked()
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
		l.waiting, l.seatsWaiting, l.active, l.queuedSeats = 0, 0, 0, 0
		for _, q := range old {
			for _, w := range q.waiting {
				if queues == 0 { // now a Reject level: run them rather than strand them
					w.queue = -1
					l.startLocked(w.flow, w.capped, -1, w.est)
					w.dispatched, w.start = true, now
					close(w.ready)
					continue
				}
				l.enqueueLocked(l.chooseLocked(w.flow), w)
			}
		}
	}
	l.dispatchLocked(now)
}

// setLimit sets the level's current limit and serves the queues.
func (l *level) setLimit(limit int) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.advanceLocked(now)
	l.limit = limit
	l.dispatchLocked(now)
}

// setFlowLimitLocked derives a capped flow's share from the nominal limit
// (not the current one: a user's share does not grow with the seats its
// level borrows); 100 percent or more: no cap.
func (l *level) setFlowLimitLocked() {
	l.flowLimit = math.MaxInt
	if l.flowPercent > 0 && l.flowPercent < 100 {
		l.flowLimit = max(1, l.nominal*l.flowPercent/100)
	}
}

// advanceLocked brings virtual time and the demand integrator to now.
func (l *level) advanceLocked(now int64) {
	if dt := now - l.last; dt > 0 && l.active > 0 {
		l.vt += float64(dt) * float64(min(l.queuedSeats, l.limit)) / float64(l.active)
	}
	l.last = now
}

func (l *level) noteDemandLocked(now int64) {
	l.demand.set(now, float64(l.seats+l.seatsWaiting))
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

// chooseLocked is the queue of the flow's hand with the least waiting work
// (Kubernetes' choice), the scan starting at a rotating card so that ties
// spread; -1 without queues.
func (l *level) chooseLocked(flow uint64) int {
	if len(l.queues) == 0 {
		return -1
	}
	var hand [maxHand]int
	n := deal(flow, len(l.queues), l.handSize, &hand)
	off := l.enqueues % n
	l.enqueues++
	best := -1
	for k := range n {
		qi := hand[(off+k)%n]
		if best < 0 || l.queues[qi].waitingWork < l.queues[best].waitingWork {
			best = qi
		}
	}
	return best
}

// fitsLocked reports whether a request of seats may start now: it fits in
// the free seats, or it is wider than the limit and nothing runs (as
// Kubernetes lets such a request run alone).
func (l *level) fitsLocked(seats int) bool {
	if l.exempt {
		return true
	}
	return l.seats+seats <= l.limit || (seats > l.limit && l.executing == 0)
}

// underShareLocked reports whether a flow may take seats more; a flow
// holding none may always start one request.
func (l *level) underShareLocked(flow uint64, capped bool, seats int) bool {
	if !capped {
		return true
	}
	held := l.flows[flow]
	return held == 0 || held+seats <= l.flowLimit
}

// clampFinal narrows final seats wider than the limit, keeping their work
// (as Kubernetes does at dispatch).
func (l *level) clampFinal(e estimate) estimate {
	if e.final > l.limit && l.limit > 0 && !l.exempt {
		e.latency = time.Duration(float64(e.latency) * float64(e.final) / float64(l.limit))
		e.final = l.limit
	}
	return e
}

// startLocked gives a request its seats, charged to queue qi (-1: none).
func (l *level) startLocked(flow uint64, capped bool, qi int, e estimate) {
	s := e.seats()
	l.executing++
	l.seats += s
	if qi >= 0 {
		q := &l.queues[qi]
		if !q.busy() {
			l.active++
			q.nextR = l.vt
		}
		q.executing++
		q.seats += s
		q.nextR += e.work()
		l.queuedSeats += s
	}
	if capped {
		l.flows[flow] += s
	}
}

func (l *level) enqueueLocked(qi int, w *waiter) {
	q := &l.queues[qi]
	if !q.busy() {
		l.active++
		q.nextR = l.vt
	}
	w.queue = qi
	q.waiting = append(q.waiting, w)
	s := w.est.seats()
	q.waitingSeats += s
	q.waitingWork += w.est.work()
	l.waiting++
	l.seatsWaiting += s
	l.queuedSeats += s
}

// unqueueLocked takes w (at position i) out of its queue.
func (l *level) unqueueLocked(w *waiter, i int) {
	q := &l.queues[w.queue]
	copy(q.waiting[i:], q.waiting[i+1:])
	q.waiting[len(q.waiting)-1] = nil
	q.waiting = q.waiting[:len(q.waiting)-1]
	s := w.est.seats()
	q.waitingSeats -= s
	q.waitingWork -= w.est.work()
	l.waiting--
	l.seatsWaiting -= s
	l.queuedSeats -= s
	if !q.busy() {
		l.active--
	}
}

// boundLocked keeps a queue's next dispatch from preceding its head's
// arrival (Kubernetes' anti-windup).
func (l *level) boundLocked(qi int) {
	q := &l.queues[qi]
	if len(q.waiting) > 0 && q.nextR < q.waiting[0].arrivalR {
		q.nextR = q.waiting[0].arrivalR
	}
}

// rejection says why a request got no seat.
type rejection string

const (
	rejectNoSeat    rejection = "the priority level has no free seat and does not queue"
	rejectQueueFull rejection = "the request's queue is full"
	rejectTimeout   rejection = "the request waited too long in its queue"
	rejectCancelled rejection = "the request was cancelled while in its queue"
)

// acquire takes e.seats() seats for flow, waiting in a queue up to wait when
// the level queues; a capped flow holds at most its share of the seats. The
// rejection is empty on success.
func (l *level) acquire(ctx context.Context, flow uint64, capped bool, e estimate, wait time.Duration) (ticket, rejection) {
	now := l.now()
	l.mu.Lock()
	l.advanceLocked(now)
	e = l.clampFinal(e)
	if l.waiting == 0 && l.fitsLocked(e.seats()) && l.underShareLocked(flow, capped, e.seats()) {
		// Nothing waits, so the request is the one fair queuing would
		// dispatch; it is charged to the first queue of its hand (one
		// division instead of dealing the whole hand: every queue of the
		// hand is empty, a tie).
		qi := -1
		if n := len(l.queues); n > 0 {
			qi = int(flow % uint64(n))
		}
		l.startLocked(flow, capped, qi, e)
		l.noteDemandLocked(now)
		t := ticket{l: l, flow: flow, capped: capped, queue: qi, gen: l.gen, est: e, start: now}
		l.mu.Unlock()
		return t, ""
	}
	qi := l.chooseLocked(flow)
	if qi < 0 {
		l.mu.Unlock()
		return ticket{}, rejectNoSeat
	}
	if len(l.queues[qi].waiting) >= l.queueLengthLimit {
		l.mu.Unlock()
		return ticket{}, rejectQueueFull
	}
	w := &waiter{ready: make(chan struct{}), flow: flow, capped: capped, est: e, arrivalR: l.vt}
	l.enqueueLocked(qi, w)
	l.boundLocked(qi)
	l.dispatchLocked(now)
	l.noteDemandLocked(now)
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
	now = l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.dispatched {
		return ticket{l: l, flow: flow, capped: capped, queue: w.queue, gen: w.gen, est: w.est, start: w.start}, ""
	}
	l.advanceLocked(now)
	q := &l.queues[w.queue]
	for i, x := range q.waiting {
		if x == w {
			l.unqueueLocked(w, i)
			break
		}
	}
	l.boundLocked(w.queue)
	l.dispatchLocked(now) // a wide request leaving the head may unblock others
	l.noteDemandLocked(now)
	return ticket{}, why
}

// finish ends the request of t: its queue's virtual time is corrected by
// the actual service time, and its seats are given back now, or after its
// additional latency.
func (t ticket) finish() {
	l := t.l
	if l == nil {
		return
	}
	now := l.now()
	l.mu.Lock()
	l.advanceLocked(now)
	if t.queue >= 0 && t.gen == l.gen {
		l.queues[t.queue].nextR -= float64(t.est.initial) * float64(int64(serviceEstimate)-(now-t.start))
		l.boundLocked(t.queue)
	}
	if t.est.latency > 0 && t.est.final > 0 {
		l.mu.Unlock()
		time.AfterFunc(t.est.latency, t.release)
		return
	}
	l.releaseLocked(t, now)
	l.mu.Unlock()
}

// release gives t's seats back.
func (t ticket) release() {
	l := t.l
	now := l.now()
	l.mu.Lock()
	l.advanceLocked(now)
	l.releaseLocked(t, now)
	l.mu.Unlock()
}

func (l *level) releaseLocked(t ticket, now int64) {
	s := t.est.seats()
	l.executing--
	l.seats -= s
	if t.gen == l.gen && t.queue >= 0 {
		q := &l.queues[t.queue]
		q.executing--
		q.seats -= s
		l.queuedSeats -= s
		if !q.busy() {
			l.active--
		}
	}
	if t.capped {
		if n := l.flows[t.flow] - s; n <= 0 {
			delete(l.flows, t.flow)
		} else {
			l.flows[t.flow] = n
		}
	}
	if l.waiting > 0 {
		l.dispatchLocked(now)
	}
	l.noteDemandLocked(now)
}

// dispatchLocked serves the queues by fair queuing: the head of the queue
// whose virtual finish (its next dispatch plus the head's work) is the
// earliest, among the heads whose flow is under its share, ties in
// round-robin order; it stops when that head does not fit in the free seats
// (a wide request waits for enough seats, and nothing overtakes it).
func (l *level) dispatchLocked(now int64) {
	n := len(l.queues)
	for l.waiting > 0 {
		best, bestF := -1, math.Inf(1)
		for k := range n {
			i := (l.robin + 1 + k) % n
			q := &l.queues[i]
			if len(q.waiting) == 0 {
				continue
			}
			h := q.waiting[0]
			if !l.underShareLocked(h.flow, h.capped, h.est.seats()) {
				continue
			}
			if f := q.nextR + h.est.work(); f < bestF {
				best, bestF = i, f
			}
		}
		if best < 0 {
			return
		}
		w := l.queues[best].waiting[0]
		if !l.fitsLocked(w.est.seats()) {
			return
		}
		// Start before leaving the queue: the queue stays busy, so its
		// virtual time is not reset as an idle queue's would be.
		l.startLocked(w.flow, w.capped, best, l.clampFinal(w.est))
		l.unqueueLocked(w, 0)
		w.est = l.clampFinal(w.est)
		l.robin = best
		l.boundLocked(best)
		w.dispatched, w.start, w.gen = true, now, l.gen
		close(w.ready)
	}
}

// state is a snapshot of the level's counters for metrics.
type levelCounters struct {
	limit, seats, waiting, seatsWaiting int
}

func (l *level) counters() levelCounters {
	l.mu.Lock()
	defer l.mu.Unlock()
	return levelCounters{limit: l.limit, seats: l.seats, waiting: l.waiting, seatsWaiting: l.seatsWaiting}
}

// takeDemand returns the seat demand observed since the last call and
// starts a new period.
func (l *level) takeDemand() demandObservation {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.demand.reset(now)
}

// integrator integrates a value over time: its time-weighted average,
// standard deviation and maximum over a period (Kubernetes' seat demand
// integrator).
type integrator struct {
	last         int64
	x            float64
	dur, ix, ixx float64
	max          float64
}

// demandObservation is one period's seat demand.
type demandObservation struct {
	avg, stdDev, max float64
	dur              float64
}

func (g *integrator) advance(now int64) {
	if dt := float64(now - g.last); dt > 0 {
		g.dur += dt
		g.ix += g.x * dt
		g.ixx += g.x * g.x * dt
	}
	g.last = now
}

func (g *integrator) set(now int64, x float64) {
	g.advance(now)
	g.x = x
	g.max = max(g.max, x)
}

func (g *integrator) reset(now int64) demandObservation {
	g.advance(now)
	o := demandObservation{max: g.max, dur: g.dur}
	if g.dur > 0 {
		o.avg = g.ix / g.dur
		if v := g.ixx/g.dur - o.avg*o.avg; v > 0 {
			o.stdDev = math.Sqrt(v)
		}
	}
	g.dur, g.ix, g.ixx, g.max = 0, 0, 0, g.x
	return o
}
