package flowcontrol

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// Options tune a Controller; zero fields take their defaults.
type Options struct {
	// ServerConcurrencyLimit is the seats divided between the limited levels
	// (Kubernetes: max-requests-inflight + max-mutating-requests-inflight).
	ServerConcurrencyLimit int
	// PerFlowPercent is the share of its level's seats one flow of a ByUser
	// schema may hold (default 50, at least one seat; 100 turns it off).
	PerFlowPercent int
	// QueueWaitLimit bounds the time a request waits in a queue (default 15 s).
	QueueWaitLimit time.Duration
	// RetryAfterSeconds is sent with 429 (default 1).
	RetryAfterSeconds int
}

// Controller classifies requests and holds the priority levels' seats and
// queues. Update swaps the configuration in; the filter (Filter) reads it
// without locking.
type Controller struct {
	opts     Options
	mu       sync.Mutex // serializes Update
	cur      atomic.Pointer[snapshot]
	rejected rejections
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

// levelState is a level's configuration and its run-time state (nil for an
// exempt level).
type levelState struct {
	pl    PriorityLevel
	limit int
	run   *level
	// uidHeader is the header value, built once (nil without a UID: the
	// built-in defaults before the stored objects are read).
	uidHeader []string
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
	c := &Controller{opts: opts}
	c.Update(cfg)
	return c
}

// catchAllLevel is used when the configuration has no catch-all level: the
// mandatory catch-all's settings.
var catchAllLevel = PriorityLevel{Name: "catch-all", NominalConcurrencyShares: 5, Reject: true}

// Update enforces cfg from now on. Levels keep their queues and executing
// requests when their name and kind (exempt or limited) stay; requests
// queued at a removed level keep their place until they are served or time
// out.
func (c *Controller) Update(cfg Config) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.cur.Load()
	levels := cfg.PriorityLevels
	limits := nominalLimits(levels, c.opts.ServerConcurrencyLimit)
	s := &snapshot{levels: make(map[string]*levelState, len(levels))}
	for i := range levels {
		pl := levels[i]
		st := &levelState{pl: pl, limit: limits[i], uidHeader: header(pl.UID)}
		if !pl.Exempt {
			if old != nil {
				if prev := old.levels[pl.Name]; prev != nil && prev.run != nil {
					st.run = prev.run
				}
			}
			if st.run == nil {
				st.run = newLevel()
			}
			st.run.configure(&pl, limits[i], c.opts.PerFlowPercent)
		}
		s.levels[pl.Name] = st
	}
	for _, fs := range sortedSchemas(cfg.FlowSchemas) {
		st := s.levels[fs.PriorityLevel]
		if st == nil {
			continue // dangling: matches nothing
		}
		cs := compiledSchema{fs: &fs, level: st.run, levelState: st, uidHeader: header(fs.UID)}
		for _, r := range fs.Rules {
			cs.rules = append(cs.rules, compileRule(r))
		}
		s.schemas = append(s.schemas, cs)
	}
	s.index = newSubjectIndex(s.schemas)
	fallback := s.levels[catchAllLevel.Name]
	if fallback == nil || fallback.run == nil {
		pl := catchAllLevel
		fallback = &levelState{pl: pl, limit: 1, run: newLevel()}
		fallback.run.configure(&pl, 1, 100)
	}
	s.fallback = compiledSchema{fs: &FlowSchema{Name: "catch-all", PriorityLevel: fallback.pl.Name, Distinguisher: ByUser},
		level: fallback.run, levelState: fallback}
	c.cur.Store(s)
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
		LevelUID: cs.levelState.pl.UID, Exempt: cs.level == nil, Distinguisher: d}
}

// Limit returns the seats of a level (0 for an exempt or unknown one).
func (c *Controller) Limit(level string) int {
	if st := c.cur.Load().levels[level]; st != nil && st.run != nil {
		return st.limit
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
