package flowcontrol

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// watchHarness serves requests through the filter; a watch's handler waits
// for init before it signals its initialization, then for end.
type watchHarness struct {
	h         http.Handler
	started   chan struct{}
	init, end chan struct{}
}

func newWatchHarness(t *testing.T, c *Controller) *watchHarness {
	x := &watchHarness{started: make(chan struct{}, 8), init: make(chan struct{}), end: make(chan struct{})}
	x.h = filters.WithRequestInfoFilter(c.Filter(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("watch") == "" {
			return
		}
		x.started <- struct{}{}
		<-x.init
		if q.Get("signal") != "" {
			filters.WatchInitialized(r.Context())
			filters.WatchInitialized(r.Context()) // a second signal does nothing
		}
		<-x.end
	})))
	return x
}

func (x *watchHarness) serve(r *http.Request) int {
	rec := httptest.NewRecorder()
	x.h.ServeHTTP(rec, r)
	return rec.Code
}

// startWatch starts alice's watch (query) at a one-seat Reject level and
// waits until its handler runs; done is closed when it ends.
func startWatch(t *testing.T, query string) (*Controller, *watchHarness, chan struct{}) {
	c := New(Options{ServerConcurrencyLimit: 1, PerFlowPercent: 100}, oneLevel(PriorityLevel{NominalConcurrencyShares: 1, Reject: true}))
	x := newWatchHarness(t, c)
	done := make(chan struct{})
	go func() { defer close(done); x.serve(newRequest("alice", pods+query)) }()
	<-x.started
	return c, x, done
}

// executing is the seats level l's requests hold.
func executing(c *Controller, l string) int {
	return c.cur.Load().levels[l].run.counters().seats
}

func waitExecuting(t *testing.T, c *Controller, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for executing(c, "l") != want {
		if time.Now().After(deadline) {
			t.Fatalf("level l holds %d seats, want %d", executing(c, "l"), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWatchHoldsSeatUntilInitialized: a watch holds its seat while it sends
// its initial events (a list of the level is rejected meanwhile), gives it
// back when it signals its initialization (the list is served while the
// watch runs on), and gives nothing back twice.
func TestWatchHoldsSeatUntilInitialized(t *testing.T) {
	t.Parallel()
	c, x, done := startWatch(t, "?watch=1&signal=1")
	if code := x.serve(newRequest("bob", pods)); code != http.StatusTooManyRequests {
		t.Errorf("list while a watch initializes: %d, want 429", code)
	}
	close(x.init)
	waitExecuting(t, c, 0)
	if code := x.serve(newRequest("bob", pods)); code != http.StatusOK {
		t.Errorf("list after the watch initialized: %d, want 200", code)
	}
	close(x.end)
	<-done
	if n := executing(c, "l"); n != 0 {
		t.Errorf("seats held after the watch ended: %d, want 0", n)
	}
	if code := x.serve(newRequest("bob", pods)); code != http.StatusOK {
		t.Errorf("list after the watch ended: %d, want 200", code)
	}
}

// TestWatchWithoutSignalGivesSeatBackAtEnd: a watch that ends before it
// signals (an error before its initial events) gives its seat back then.
func TestWatchWithoutSignalGivesSeatBackAtEnd(t *testing.T) {
	t.Parallel()
	c, x, done := startWatch(t, "?watch=1")
	close(x.init)
	if n := executing(c, "l"); n != 1 {
		t.Errorf("seats held by an unsignalled watch: %d, want 1", n)
	}
	close(x.end)
	<-done
	waitExecuting(t, c, 0)
}

// TestWorkEstimatedSeats: every request that takes seats is observed in
// apiserver_flowcontrol_work_estimated_seats by priority level and flow
// schema with its seats (a list of 250 stored objects from the watch cache:
// 3), exempt ones too.
func TestWorkEstimatedSeats(t *testing.T) {
	t.Parallel()
	c := New(Options{ServerConcurrencyLimit: 100, PerFlowPercent: 100, ConsistentListFromCache: true,
		ObjectCounts: func() map[string]int64 { return map[string]int64{"pods": 250} }},
		oneLevel(PriorityLevel{NominalConcurrencyShares: 1, Queues: 4, HandSize: 1, QueueLengthLimit: 10}))
	c.RefreshObjectCounts()
	x := newWatchHarness(t, c)
	for _, u := range []string{pods, pods, pods + "/p"} {
		if code := x.serve(newRequest("alice", u)); code != http.StatusOK {
			t.Fatalf("%s: %d", u, code)
		}
	}
	x.serve(newRequest("root", pods, "system:masters"))
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range families {
		if f.GetName() != "apiserver_flowcontrol_work_estimated_seats" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			h := m.GetHistogram()
			key := labels["priority_level"] + "/" + labels["flow_schema"]
			found[key] = true
			want := map[string][2]float64{"l/all": {3, 7}, "exempt/exempt": {1, 3}}[key]
			if float64(h.GetSampleCount()) != want[0] || h.GetSampleSum() != want[1] {
				t.Errorf("%s: count %d sum %v, want %v", key, h.GetSampleCount(), h.GetSampleSum(), want)
			}
			var bounds []float64
			for _, b := range h.GetBucket() {
				bounds = append(bounds, b.GetUpperBound())
			}
			if len(bounds) != 4 || bounds[0] != 1 || bounds[3] != 10 {
				t.Errorf("buckets %v, want Kubernetes' 1, 2, 4, 10", bounds)
			}
		}
	}
	if !found["l/all"] || !found["exempt/exempt"] {
		t.Errorf("series %v, want l/all and exempt/exempt", found)
	}
}
