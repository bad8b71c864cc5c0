package flowcontrol

import (
	"net/http"
	"sync/atomic"

	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// Response headers naming the classification, as Kubernetes sends them (in
// canonical form, so that they are set without canonicalizing per request).
const (
	HeaderFlowSchemaUID    = "X-Kubernetes-Pf-Flowschema-Uid"
	HeaderPriorityLevelUID = "X-Kubernetes-Pf-Prioritylevel-Uid"
)

// Filter classifies each request, sets the classification headers and runs
// the request once its level gives it the seats its estimate asks for;
// exempt levels always do (their seats are counted for borrowing),
// long-running requests other than watches do not wait, watches give their
// seats back once their initial events are sent (filters.WatchInitialized)
// or they end. A request that gets no seat is answered 429 with
// Retry-After. The seats of each request that takes seats (exempt ones
// included, as Kubernetes 1.34 estimates them) are observed in
// apiserver_flowcontrol_work_estimated_seats.
func (c *Controller) Filter(next http.Handler) http.Handler {
	retry := c.opts.RetryAfterSeconds
	wait := c.opts.QueueWaitLimit
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ri, ok := filters.RequestInfoFrom(r.Context())
		if !ok {
			ri = filters.NewRequestInfo(r)
		}
		u, _ := filters.UserFrom(r.Context())
		cs, d := c.cur.Load().classify(u, ri)
		h := w.Header()
		if cs.uidHeader != nil {
			h[HeaderFlowSchemaUID] = cs.uidHeader
		}
		if cs.levelState.uidHeader != nil {
			h[HeaderPriorityLevelUID] = cs.levelState.uidHeader
		}
		if ri.IsLongRunning() && ri.Verb != "watch" {
			next.ServeHTTP(w, r)
			return
		}
		e := c.est.estimate(ri, r.URL.RawQuery, cs.levelState.maxSeats)
		cs.seats.Observe(float64(e.seats()))
		t, why := cs.level.acquire(r.Context(), flowHash(cs.fs.Name, d), cs.capped, e, wait)
		if why != "" {
			c.rejected.add(cs.fs.Name, cs.levelState.pl.Name, why)
			h.Set("X-Converge-Throttled", string(why))
			filters.WriteStatus(w, apierrors.NewTooManyRequests("Too many requests, please try again later.", retry))
			return
		}
		if ri.Verb == "watch" {
			forget := c.watches.register(ri, r.URL.RawQuery)
			init := &watchInit{t: t}
			next.ServeHTTP(w, r.WithContext(filters.WithWatchInitSignal(r.Context(), init)))
			init.Signal() // it ended before its initial events were sent
			if forget != nil {
				forget()
			}
			return
		}
		defer t.finish()
		next.ServeHTTP(w, r)
	})
}

// watchInit holds a watch's seats until its initial events are sent (or it
// ends, whichever comes first): Kubernetes' initialization signal.
type watchInit struct {
	t    ticket
	done atomic.Bool
}

// Signal implements filters.WatchInitSignal: the first call gives the seats
// back.
func (s *watchInit) Signal() {
	if s.done.CompareAndSwap(false, true) {
		s.t.finish()
	}
}
