package flowcontrol

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// Options tune a Controller; zero fields take their defaults.
type Options struct {
	// ServerConcurrencyLimit is the seats divided between the levels
	// (Kubernetes: max-requests-inflight + max-mutating-requests-inflight).
	ServerConcurrencyLimit int
	// PerFlowPercent is the share of its level's seats one flow of a ByUser
	// schema may hold (default 50, at least one seat; 100 turns it off).
	PerFlowPercent int
	// QueueWaitLimit bounds the time a request waits in a queue (default 15 s).
	QueueWaitLimit time.Duration
	// RetryAfterSeconds is sent with 429 (default 1).
	RetryAfterSeconds int
	// ObjectCounts returns the stored objects per group-resource, keyed as
	// apiserver_storage_objects ("pods", "deployments.apps"): a list's
	// seats are estimated from it. Nil: every list takes one seat.
	ObjectCounts func() map[string]int64
	// ConsistentListFromCache says the API server serves a list without
	// resourceVersion from its watch cache (the store reports watch
	// progress): such a list is estimated as one from the cache.
	ConsistentListFromCache bool
	// AdjustPeriod is how often Run recomputes the levels' current limits
	// (default 10 s, as Kubernetes).
	AdjustPeriod time.Duration
	// ObjectCountPeriod is how often Run reads ObjectCounts (default 1 min,
	// as Kubernetes' object count tracker).
	ObjectCountPeriod time.Duration
	Logger            logr.Logger
}

// Controller classifies requests and holds the priority levels' seats and
// queues. Update swaps the configuration in; the filter (Filter) reads it
// without locking. Run lends seats between the levels.
type Controller struct {
	opts     Options
	mu       sync.Mutex // serializes Update and Adjust
	cur      atomic.Pointer[snapshot]
	rejected rejections
	counts   atomic.Pointer[map[countKey]int64]
	watches  *watchTracker
	est      estimator
	// fairProp is the last allocation's fair proportion (under mu).
	fairProp float64
	// estimatedSeats is apiserver_flowcontrol_work_estimated_seats; each
	// compiled schema keeps its own observer.
	estimatedSeats *prometheus.HistogramVec
}

// snapshot is one immutable configuration.
type snapshot struct {
	schemas []compiledSchema
	// index narrows the schemas to check (nil: scan them all).
	index *subjectIndex
	// fallback classifies requests no schema matches (Kubernetes' catch-all).
	fallback compiledSchema
	levels   map[string]*levelState
}

// levelState is a level's configuration and its run-time state.
type levelState struct {
	pl PriorityLevel
	// nominal is the level's share of the server's seats; lower and upper
	// bound its current limit (nominal less the lendable seats, nominal plus
	// the seats it may borrow).
	nominal, lower, upper int
	// maxSeats is the widest request of the level.
	maxSeats int
	run      *level
	borrow   *borrowState
	// uidHeader is the header value, built once (nil without a UID: the
	// built-in defaults before the stored objects are read).
	uidHeader []string
}

// borrowState is a level's borrowing state, kept across updates (under the
// controller's mu).
type borrowState struct {
	stats   demandStats
	target  float64
	current int
}

// New returns a Controller enforcing cfg.
func New(opts Options, cfg Config) *Controller {
	if opts.PerFlowPercent <= 0 {
		opts.PerFlowPercent = 50
	}
	if opts.QueueWaitLimit <= 0 {
		opts.QueueWaitLimit = 15 * time.Second
	}
	if opts.RetryAfterSeconds <= 0 {
		opts.RetryAfterSeconds = 1
	}
	if opts.AdjustPeriod <= 0 {
		opts.AdjustPeriod = 10 * time.Second
	}
	if opts.ObjectCountPeriod <= 0 {
		opts.ObjectCountPeriod = time.Minute
	}
	c := &Controller{opts: opts, watches: newWatchTracker(), estimatedSeats: newEstimatedSeats()}
	c.est = estimator{cacheServesConsistent: opts.ConsistentListFromCache, watches: c.watches}
	if opts.ObjectCounts != nil {
		c.est.counts = func() map[countKey]int64 {
			if m := c.counts.Load(); m != nil {
				return *m
			}
			return nil
		}
	}
	c.Update(cfg)
	return c
}

// Run reads the object counts and adjusts the levels' limits periodically
// until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	c.RefreshObjectCounts()
	adjust := time.NewTicker(c.opts.AdjustPeriod)
	defer adjust.Stop()
	counts := time.NewTicker(c.opts.ObjectCountPeriod)
	defer counts.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-adjust.C:
			c.Adjust()
		case <-counts.C:
			c.RefreshObjectCounts()
		}
	}
}

// RefreshObjectCounts reads Options.ObjectCounts now.
func (c *Controller) RefreshObjectCounts() {
	if c.opts.ObjectCounts == nil {
		return
	}
	m := parseCounts(c.opts.ObjectCounts())
	c.counts.Store(&m)
}

// catchAllLevel is used when the configuration has no catch-all level: the
// mandatory catch-all's settings.
var catchAllLevel = PriorityLevel{Name: "catch-all", NominalConcurrencyShares: 5, Reject: true}

// Update enforces cfg from now on. Levels keep their queues, executing
// requests and borrowing state when their name stays; requests queued at a
// removed level keep their place until they are served or time out. The
// limits are recomputed at once.
func (c *Controller) Update(cfg Config) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.cur.Load()
	levels := cfg.PriorityLevels
	nominal := nominalLimits(levels, c.opts.ServerConcurrencyLimit)
	s := &snapshot{levels: make(map[string]*levelState, len(levels))}
	for i := range levels {
		pl := levels[i]
		st := &levelState{pl: pl, nominal: nominal[i], uidHeader: header(pl.UID)}
		st.lower, st.upper = bounds(&pl, nominal[i], c.opts.ServerConcurrencyLimit)
		st.maxSeats = levelMaxSeats(&pl, nominal[i])
		if old != nil {
			if prev := old.levels[pl.Name]; prev != nil {
				st.run, st.borrow = prev.run, prev.borrow
			}
		}
		if st.run == nil {
			st.run = newLevel()
			// Kubernetes' initial limit: nominal less half the lendable seats.
			st.borrow = &borrowState{current: nominal[i] - (nominal[i]-st.lower)/2}
			st.run.setLimit(st.borrow.current)
		}
		st.run.configure(&pl, nominal[i], c.opts.PerFlowPercent)
		s.levels[pl.Name] = st
	}
	for _, fs := range sortedSchemas(cfg.FlowSchemas) {
		st := s.levels[fs.PriorityLevel]
		if st == nil {
			continue // dangling: matches nothing
		}
		cs := compiledSchema{fs: &fs, level: st.run, levelState: st, uidHeader: header(fs.UID),
			capped: fs.Distinguisher == ByUser && !st.pl.Exempt}
		cs.seats = c.estimatedSeats.WithLabelValues(st.pl.Name, fs.Name)
		for _, r := range fs.Rules {
			cs.rules = append(cs.rules, compileRule(r))
		}
		s.schemas = append(s.schemas, cs)
	}
	s.index = newSubjectIndex(s.schemas)
	fallback := s.levels[catchAllLevel.Name]
	if fallback == nil || fallback.pl.Exempt {
		pl := catchAllLevel
		fallback = &levelState{pl: pl, nominal: 1, lower: 1, upper: 1, maxSeats: 1, run: newLevel(), borrow: &borrowState{current: 1}}
		fallback.run.setLimit(1)
		fallback.run.configure(&pl, 1, 100)
	}
	s.fallback = compiledSchema{fs: &FlowSchema{Name: "catch-all", PriorityLevel: fallback.pl.Name, Distinguisher: ByUser},
		level: fallback.run, levelState: fallback, capped: true,
		seats: c.estimatedSeats.WithLabelValues(fallback.pl.Name, "catch-all")}
	c.adjustLocked(s, false)
	c.cur.Store(s)
}

// bounds are a level's lower and upper limits: nominal less its lendable
// seats, nominal plus the seats it may borrow (the server's limit when
// borrowingLimitPercent is unset), as Kubernetes rounds them.
func bounds(pl *PriorityLevel, nominal, server int) (lower, upper int) {
	lendable, borrowing := 0, server
	if p := pl.LendablePercent; p != nil {
		lendable = int(math.Round(float64(nominal) * float64(*p) / 100))
	}
	if p := pl.BorrowingLimitPercent; p != nil {
		borrowing = int(math.Round(float64(nominal) * float64(*p) / 100))
	}
	return nominal - lendable, nominal + borrowing
}

// Classification is where a request goes.
type Classification struct {
	FlowSchema, PriorityLevel string
	FlowSchemaUID, LevelUID   string
	Exempt                    bool
	// Distinguisher is the flow within the schema (user or namespace).
	Distinguisher string
}

// Classify returns the classification of a request of u (nil: anonymous)
// described by ri.
func (c *Controller) Classify(u *filters.User, ri *filters.RequestInfo) Classification {
	cs, d := c.cur.Load().classify(u, ri)
	return Classification{FlowSchema: cs.fs.Name, PriorityLevel: cs.levelState.pl.Name, FlowSchemaUID: cs.fs.UID,
		LevelUID: cs.levelState.pl.UID, Exempt: cs.levelState.pl.Exempt, Distinguisher: d}
}

// Limit returns the nominal seats of a level (0 for an exempt or unknown
// one).
func (c *Controller) Limit(level string) int {
	if st := c.cur.Load().levels[level]; st != nil && !st.pl.Exempt {
		return st.nominal
	}
	return 0
}

// CurrentLimit returns the current seats of a level: its nominal limit
// adjusted by borrowing (0 for an unknown level).
func (c *Controller) CurrentLimit(level string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.cur.Load().levels[level]; st != nil {
		return st.borrow.current
	}
	return 0
}

var anonymousGroups = []string{filters.GroupUnauthenticated}

func (s *snapshot) classify(u *filters.User, ri *filters.RequestInfo) (*compiledSchema, string) {
	q := request{user: filters.UserAnonymous, groups: anonymousGroups, ri: ri}
	if u != nil {
		q.user, q.groups = u.Name, u.Groups
	}
	cs := &s.fallback
	if s.index != nil {
		set := s.index.candidates(&q)
		for i := set.next(0); i >= 0; i = set.next(i + 1) {
			if s.schemas[i].matches(&q) {
				cs = &s.schemas[i]
				break
			}
		}
	} else {
		for i := range s.schemas {
			if s.schemas[i].matches(&q) {
				cs = &s.schemas[i]
				break
			}
		}
	}
	switch cs.fs.Distinguisher {
	case ByUser:
		return cs, q.user
	case ByNamespace:
		return cs, ri.Namespace
	}
	return cs, ""
}

func (cs *compiledSchema) matches(q *request) bool {
	for i := range cs.rules {
		if cs.rules[i].matches(q) {
			return true
		}
	}
	return false
}

// header is a header value of uid, nil for none.
func header(uid string) []string {
	if uid == "" {
		return nil
	}
	return []string{uid}
}
