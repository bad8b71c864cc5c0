package flowcontrol

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// harness serves requests through the filter to a handler that holds each
// request until released.
type harness struct {
	t       *testing.T
	h       http.Handler
	entered chan string
	release chan struct{}
	wg      sync.WaitGroup
}

func newHarness(t *testing.T, c *Controller) *harness {
	x := &harness{t: t, entered: make(chan string, 64), release: make(chan struct{})}
	x.h = filters.WithRequestInfoFilter(c.Filter(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := filters.UserFrom(r.Context())
		x.entered <- u.Name
		if r.URL.Query().Get("hold") != "" {
			<-x.release
		}
	})))
	t.Cleanup(func() {
		select {
		case <-x.release:
		default:
			close(x.release)
		}
		x.wg.Wait()
	})
	return x
}

func newRequest(user, url string, groups ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, url, nil)
	return r.WithContext(filters.WithUser(r.Context(), &filters.User{Name: user, Groups: append(groups, "system:authenticated")}))
}

// start serves r in the background; its recorder is filled when done is
// closed.
func (x *harness) start(r *http.Request) (*httptest.ResponseRecorder, chan struct{}) {
	rec, done := httptest.NewRecorder(), make(chan struct{})
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		defer close(done)
		x.h.ServeHTTP(rec, r)
	}()
	return rec, done
}

// hold serves r and waits until the handler runs it.
func (x *harness) hold(r *http.Request) {
	x.t.Helper()
	x.start(r)
	select {
	case <-x.entered:
	case <-time.After(5 * time.Second):
		x.t.Fatalf("request %s was not served", r.URL)
	}
}

func (x *harness) serve(r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	x.h.ServeHTTP(rec, r)
	select {
	case <-x.entered:
	default:
	}
	return rec
}

func expectTooMany(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	var st struct{ Message, Reason string }
	_ = json.Unmarshal(rec.Body.Bytes(), &st)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" ||
		st.Message != "Too many requests, please try again later." || st.Reason != "TooManyRequests" {
		t.Errorf("got %d Retry-After %q %+v, want 429 with Retry-After 1 and Kubernetes' message", rec.Code, rec.Header().Get("Retry-After"), st)
	}
}

const pods = "/api/v1/namespaces/d/pods"

// oneLevel routes every authenticated user to level "l" by user;
// system:masters are exempt.
func oneLevel(l PriorityLevel) Config {
	l.Name, l.UID = "l", "pl-l"
	return Config{
		PriorityLevels: []PriorityLevel{{Name: "exempt", UID: "pl-exempt", Exempt: true}, l},
		FlowSchemas: []FlowSchema{
			{Name: "exempt", UID: "fs-exempt", MatchingPrecedence: 1, PriorityLevel: "exempt", Rules: []Rule{everything(Subject{Group: "system:masters"})}},
			{Name: "all", UID: "fs-all", MatchingPrecedence: 100, PriorityLevel: "l", Distinguisher: ByUser, Rules: []Rule{everything(Subject{Group: "system:authenticated"})}},
		},
	}
}

func TestHeadersAndRejectLevel(t *testing.T) {
	t.Parallel()
	c := New(Options{ServerConcurrencyLimit: 1, PerFlowPercent: 100}, oneLevel(PriorityLevel{NominalConcurrencyShares: 1, Reject: true}))
	x := newHarness(t, c)
	rec := x.serve(newRequest("alice", pods))
	if rec.Code != http.StatusOK || rec.Header().Get("X-Kubernetes-PF-FlowSchema-UID") != "fs-all" ||
		rec.Header().Get("X-Kubernetes-PF-PriorityLevel-UID") != "pl-l" {
		t.Fatalf("got %d %v, want 200 with the classification headers", rec.Code, rec.Header())
	}
	x.hold(newRequest("alice", pods+"?hold=1"))
	rec = x.serve(newRequest("bob", pods))
	expectTooMany(t, rec)
	if rec.Header().Get("X-Kubernetes-PF-FlowSchema-UID") != "fs-all" {
		t.Errorf("a rejected request carries the headers too: %v", rec.Header())
	}
	if rec := x.serve(newRequest("admin", pods, "system:masters")); rec.Code != http.StatusOK ||
		rec.Header().Get("X-Kubernetes-PF-PriorityLevel-UID") != "pl-exempt" {
		t.Errorf("exempt request: %d %v", rec.Code, rec.Header())
	}
	if rec := x.serve(newRequest("bob", pods+"/p/exec")); rec.Code != http.StatusOK {
		t.Errorf("exec is long-running and never waits for a seat: %d", rec.Code)
	}
}

// TestFloodingFlowIsQueued: a flow holding its share waits in its queue while
// another flow's requests run; a freed seat goes to the queued request; a
// full queue and a too long wait answer 429.
func TestFloodingFlowIsQueued(t *testing.T) {
	t.Parallel()
	c := New(Options{ServerConcurrencyLimit: 4, PerFlowPercent: 50, QueueWaitLimit: 300 * time.Millisecond},
		oneLevel(PriorityLevel{NominalConcurrencyShares: 1, Queues: 8, HandSize: 1, QueueLengthLimit: 1}))
	x := newHarness(t, c)
	x.hold(newRequest("greedy", pods+"?hold=1"))
	x.hold(newRequest("greedy", pods+"?hold=1"))

	queued, done := x.start(newRequest("greedy", pods+"?hold=1"))
	time.Sleep(50 * time.Millisecond)
	select {
	case <-done:
		t.Fatalf("greedy's third request ran at once (%d), want it queued", queued.Code)
	default:
	}
	expectTooMany(t, x.serve(newRequest("greedy", pods))) // its queue (hand of one) is full
	if rec := x.serve(newRequest("polite", pods)); rec.Code != http.StatusOK {
		t.Fatalf("another flow's request: %d, want 200 while greedy is queued", rec.Code)
	}
	<-done
	expectTooMany(t, queued) // waited 300 ms without a seat
}

func TestQueuedRequestGetsFreedSeat(t *testing.T) {
	t.Parallel()
	c := New(Options{ServerConcurrencyLimit: 2, PerFlowPercent: 100},
		oneLevel(PriorityLevel{NominalConcurrencyShares: 1, Queues: 4, HandSize: 2, QueueLengthLimit: 10}))
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	h := filters.WithRequestInfoFilter(c.Filter(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		if r.URL.Query().Get("hold") != "" {
			<-release
		}
	})))
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); h.ServeHTTP(httptest.NewRecorder(), newRequest("a", pods+"?hold=1")) }()
		<-entered
	}
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { defer close(done); h.ServeHTTP(rec, newRequest("b", pods)) }()
	select {
	case <-done:
		t.Fatal("b ran without a seat")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-done
	wg.Wait()
	if rec.Code != http.StatusOK {
		t.Errorf("b after a seat freed: %d", rec.Code)
	}
}

// TestCancelledWhileQueued: a request whose client goes away leaves its queue.
func TestCancelledWhileQueued(t *testing.T) {
	t.Parallel()
	c := New(Options{ServerConcurrencyLimit: 1, PerFlowPercent: 100},
		oneLevel(PriorityLevel{NominalConcurrencyShares: 1, Queues: 1, HandSize: 1, QueueLengthLimit: 1}))
	x := newHarness(t, c)
	x.hold(newRequest("a", pods+"?hold=1"))
	ctx, cancel := context.WithCancel(context.Background())
	r := newRequest("b", pods)
	rec, done := x.start(r.WithContext(filters.WithUser(ctx, &filters.User{Name: "b", Groups: []string{"system:authenticated"}})))
	time.Sleep(20 * time.Millisecond)
	cancel()
	<-done
	expectTooMany(t, rec)
	// The queue is empty again: the next request may wait in it.
	_, done = x.start(newRequest("c", pods))
	time.Sleep(20 * time.Millisecond)
	x.release <- struct{}{}
	<-done
}

// TestUpdateKeepsLevel: a configuration update keeps the seats held.
func TestUpdateKeepsLevel(t *testing.T) {
	t.Parallel()
	cfg := oneLevel(PriorityLevel{NominalConcurrencyShares: 1, Reject: true})
	c := New(Options{ServerConcurrencyLimit: 1, PerFlowPercent: 100}, cfg)
	x := newHarness(t, c)
	x.hold(newRequest("a", pods+"?hold=1"))
	cfg.FlowSchemas[1].UID = "fs-all-2"
	c.Update(cfg)
	rec := x.serve(newRequest("b", pods))
	expectTooMany(t, rec)
	if got := rec.Header().Get(HeaderFlowSchemaUID); got != "fs-all-2" {
		t.Errorf("header after update: %q", got)
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	c := New(Options{ServerConcurrencyLimit: 1, PerFlowPercent: 100}, oneLevel(PriorityLevel{NominalConcurrencyShares: 1, Reject: true}))
	x := newHarness(t, c)
	x.hold(newRequest("a", pods+"?hold=1"))
	expectTooMany(t, x.serve(newRequest("b", pods)))
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				key += " " + l.GetName() + "=" + l.GetValue()
			}
			got[key] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	for key, want := range map[string]float64{
		"apiserver_flowcontrol_nominal_limit_seats priority_level=l":                                              1,
		"apiserver_flowcontrol_nominal_limit_seats priority_level=exempt":                                         0,
		"apiserver_flowcontrol_lower_limit_seats priority_level=l":                                                1,
		"apiserver_flowcontrol_upper_limit_seats priority_level=l":                                                2,
		"apiserver_flowcontrol_current_limit_seats priority_level=l":                                              1,
		"apiserver_flowcontrol_current_inqueue_seats priority_level=l":                                            0,
		"apiserver_flowcontrol_demand_seats_high_watermark priority_level=l":                                      0,
		"apiserver_flowcontrol_seat_fair_frac":                                                                    0,
		"apiserver_flowcontrol_current_executing_seats priority_level=l":                                          1,
		"apiserver_flowcontrol_current_inqueue_requests priority_level=l":                                         0,
		"apiserver_flowcontrol_rejected_requests_total flow_schema=all priority_level=l reason=concurrency-limit": 1,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v; all: %v", key, v, ok, want, got)
		}
	}
}

// TestOnlyUserFlowsAreCapped: a schema without a distinguisher is one flow
// that may use every seat of its level.
func TestOnlyUserFlowsAreCapped(t *testing.T) {
	t.Parallel()
	cfg := oneLevel(PriorityLevel{NominalConcurrencyShares: 1, Reject: true})
	cfg.FlowSchemas[1].Distinguisher = ""
	c := New(Options{ServerConcurrencyLimit: 2, PerFlowPercent: 50}, cfg)
	x := newHarness(t, c)
	x.hold(newRequest("a", pods+"?hold=1"))
	x.hold(newRequest("a", pods+"?hold=1"))
	expectTooMany(t, x.serve(newRequest("b", pods)))
}
