package flowcontrol

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestFairQueuingWithWidth: queues are served by virtual finish time, a
// request's work being its seats × the estimated service time, so a flow of
// 5-seat requests is served one request per five of a 1-seat flow; a wide
// head that does not fit waits for its seats and nothing overtakes it.
func TestFairQueuingWithWidth(t *testing.T) {
	t.Parallel()
	l := newLevel()
	pl := PriorityLevel{Name: "l", Queues: 4, HandSize: 1, QueueLengthLimit: 100}
	l.configure(&pl, 10, 100)
	l.setLimit(10)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seats, l.executing = 10, 10 // the level is full (requests outside the queues)
	var all []*waiter
	names := map[*waiter]string{}
	add := func(qi int, name string, seats int) {
		w := &waiter{ready: make(chan struct{}), flow: uint64(qi), est: estimate{initial: seats}}
		l.enqueueLocked(qi, w)
		all = append(all, w)
		names[w] = name
	}
	for i := range 2 {
		add(0, fmt.Sprintf("W%d", i+1), 5)
	}
	for i := range 8 {
		add(1, fmt.Sprintf("n%d", i+1), 1)
	}
	seen := map[*waiter]bool{}
	free := func(seats int) string {
		l.seats -= seats
		l.executing -= seats
		l.dispatchLocked(0)
		var got []string
		for _, w := range all {
			if w.dispatched && !seen[w] {
				seen[w] = true
				got = append(got, names[w])
			}
		}
		return strings.Join(got, ",")
	}
	for i, want := range []string{
		"n1", "n2", "n3", "n4", // finishes 3, 6, 9, 12 ms before W1's 15
		"", "", "", "", // W1 (finish 15, first on the tie) waits for 5 seats; n5 does not overtake it
		"W1", // 5 seats free
		"n5", // W2 finishes at 30, n5 at 15
	} {
		if got := free(1); got != want {
			t.Fatalf("release %d dispatched %q, want %q", i+1, got, want)
		}
	}
	if l.waiting != 4 || l.seatsWaiting != 8 {
		t.Errorf("waiting %d requests, %d seats; want 4 and 8", l.waiting, l.seatsWaiting)
	}
}

// TestFinalSeatsLinger: a write's final seats stay held for its additional
// latency after it finishes.
func TestFinalSeatsLinger(t *testing.T) {
	t.Parallel()
	l := newLevel()
	pl := PriorityLevel{Name: "l", Reject: true}
	l.configure(&pl, 4, 100)
	l.setLimit(4)
	tk, why := l.acquire(t.Context(), 1, false, estimate{initial: 1, final: 3, latency: 200 * time.Millisecond}, time.Second)
	if why != "" {
		t.Fatal(why)
	}
	if n := l.counters().seats; n != 3 {
		t.Fatalf("seats while it runs: %d, want max(initial, final) = 3", n)
	}
	tk.finish()
	if n := l.counters().seats; n != 3 {
		t.Errorf("seats right after it finished: %d, want 3 (lingering)", n)
	}
	if _, why := l.acquire(t.Context(), 2, false, estimate{initial: 2}, time.Second); why != rejectNoSeat {
		t.Errorf("a 2-seat request with 1 seat free: %q, want rejected", why)
	}
	deadline := time.Now().Add(5 * time.Second)
	for l.counters().seats != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the final seats were not given back")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
