package flowcontrol

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// twoLevels routes group "ga" to level a and "gb" to level b, each with half
// the server's seats, half of them lendable, borrowing unlimited.
func twoLevels() Config {
	half := int32(50)
	lvl := func(name string) PriorityLevel {
		return PriorityLevel{Name: name, NominalConcurrencyShares: 1, LendablePercent: &half, Queues: 4, HandSize: 1, QueueLengthLimit: 50}
	}
	fs := func(name string) FlowSchema {
		return FlowSchema{Name: name, MatchingPrecedence: 100, PriorityLevel: name, Rules: []Rule{everything(Subject{Group: "g" + name})}}
	}
	return Config{
		PriorityLevels: []PriorityLevel{{Name: "exempt", Exempt: true}, lvl("a"), lvl("b")},
		FlowSchemas:    []FlowSchema{fs("a"), fs("b")},
	}
}

// TestBorrowing: a level whose neighbour is idle borrows its lendable seats
// and serves more requests at once than its nominal limit; when the
// neighbour gets busy it gets its seats back within one adjustment period.
func TestBorrowing(t *testing.T) {
	t.Parallel()
	const period = 400 * time.Millisecond
	c := New(Options{ServerConcurrencyLimit: 8, PerFlowPercent: 100, AdjustPeriod: period}, twoLevels())
	if c.Limit("a") != 4 || c.CurrentLimit("a") != 4 || c.CurrentLimit("b") != 4 {
		t.Fatalf("nominal %d, current %d/%d, want 4 each", c.Limit("a"), c.CurrentLimit("a"), c.CurrentLimit("b"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx)

	release := make(chan struct{})
	var running [2]atomic.Int32
	h := filters.WithRequestInfoFilter(c.Filter(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := filters.UserFrom(r.Context())
		i := 0
		if u.Name == "b" {
			i = 1
		}
		running[i].Add(1)
		<-release
	})))
	done := make(chan struct{}, 32)
	send := func(user string, n int) {
		for range n {
			go func() {
				defer func() { done <- struct{}{} }()
				h.ServeHTTP(discardRecorder(), newRequest(user, pods, "g"+user))
			}()
		}
	}
	waitFor := func(what string, i int, want int32, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for running[i].Load() < want {
			if time.Since(start) > within {
				t.Fatalf("%s: %d running after %v, want %d", what, running[i].Load(), within, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
		return time.Since(start)
	}

	send("a", 8)
	waitFor("a at its nominal limit", 0, 4, 2*time.Second)
	took := waitFor("a borrowing b's lendable seats", 0, 6, 3*period)
	t.Logf("a runs 6 requests (nominal 4) after %v; current limits a=%d b=%d", took, c.CurrentLimit("a"), c.CurrentLimit("b"))
	if got := c.CurrentLimit("b"); got != 2 {
		t.Errorf("idle b lends down to its lower bound: current %d, want 2", got)
	}

	send("b", 8)
	waitFor("b at its lower bound", 1, 2, 2*time.Second)
	took = waitFor("b getting its seats back", 1, 4, period+period/2)
	t.Logf("b runs 4 requests %v after it got busy; current limits a=%d b=%d", took, c.CurrentLimit("a"), c.CurrentLimit("b"))
	if a, b := c.CurrentLimit("a"), c.CurrentLimit("b"); a != 4 || b != 4 {
		t.Errorf("both busy: current limits a=%d b=%d, want their nominal 4", a, b)
	}
	close(release)
	for range 16 {
		<-done
	}
	for _, name := range []string{"a", "b"} {
		l := c.cur.Load().levels[name].run
		l.mu.Lock()
		if l.seats != 0 || l.executing != 0 || l.waiting != 0 || l.seatsWaiting != 0 || l.active != 0 || l.queuedSeats != 0 {
			t.Errorf("level %s after every request ended: seats %d executing %d waiting %d/%d seats, %d busy queues, %d queued seats; want all 0",
				name, l.seats, l.executing, l.waiting, l.seatsWaiting, l.active, l.queuedSeats)
		}
		l.mu.Unlock()
	}
}

// TestWideRequestWaits: a list estimated at several seats waits in its queue
// until that many seats are free, and holds them while it runs.
func TestWideRequestWaits(t *testing.T) {
	t.Parallel()
	// 20 seats, a request takes at most ceil(15% of 20) = 3; a list of 150
	// pods from storage processes 300 objects: 3 seats.
	counts := map[string]int64{"pods": 150}
	cfg := oneLevel(PriorityLevel{NominalConcurrencyShares: 1, Queues: 8, HandSize: 1, QueueLengthLimit: 10})
	c := New(Options{ServerConcurrencyLimit: 20, PerFlowPercent: 100, ObjectCounts: func() map[string]int64 { return counts }}, cfg)
	c.RefreshObjectCounts()
	x := newHarness(t, c)
	for range 18 {
		x.hold(newRequest("small", pods+"/p?hold=1")) // a get: one seat each
	}
	wide, done := x.start(newRequest("wide", pods+"?hold=1"))
	select {
	case <-done:
		t.Fatalf("the 3-seat list ran with 2 seats free (%d)", wide.Code)
	case <-x.entered:
		t.Fatal("the 3-seat list ran with 2 seats free")
	case <-time.After(100 * time.Millisecond):
	}
	if n := c.cur.Load().levels["l"].run.counters(); n.seats != 18 || n.seatsWaiting != 3 {
		t.Errorf("counters %+v, want 18 seats in use and 3 waiting", n)
	}
	x.release <- struct{}{} // one small request ends: 3 seats free
	select {
	case <-x.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the wide list did not run once 3 seats were free")
	}
	if n := c.cur.Load().levels["l"].run.counters(); n.seats != 20 {
		t.Errorf("seats in use %d, want 20 (17 + 3)", n.seats)
	}
	// The level is full: a one-seat request waits too.
	_, small := x.start(newRequest("other", pods+"/q"))
	select {
	case <-small:
		t.Fatal("a request ran with no seat free")
	case <-time.After(50 * time.Millisecond):
	}
}

func discardRecorder() http.ResponseWriter { return &discard{h: http.Header{}} }
