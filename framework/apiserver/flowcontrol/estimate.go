package flowcontrol

import (
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// Work estimation constants: Kubernetes' defaults (1.32).
const (
	minSeats      = 1
	maxSeatsLimit = 10
	// objectsPerSeat: a list takes one seat per this many objects it will
	// process.
	objectsPerSeat = 100
	// watchesPerSeat: a write takes one final seat per this many watches
	// its event goes to, held eventAdditionalDuration each.
	watchesPerSeat          = 10
	eventAdditionalDuration = 5 * time.Millisecond
	// levelMaxSeatsPercent bounds a request's seats in a queuing level to
	// this share of its nominal limit (and to nominal/handSize).
	levelMaxSeatsPercent = 15
)

// countKey is a group-resource ("" group for the core group).
type countKey struct{ group, resource string }

// parseCounts turns apiserver_storage_objects keys ("pods",
// "deployments.apps") into count keys.
func parseCounts(in map[string]int64) map[countKey]int64 {
	out := make(map[countKey]int64, len(in))
	for gr, n := range in {
		res, group, _ := strings.Cut(gr, ".")
		out[countKey{group, res}] = n
	}
	return out
}

// levelMaxSeats is the widest request a level admits, as Kubernetes derives
// it: max(1, min(ceil(15% of nominal), nominal/handSize)) for a queuing level,
// else the global maximum; never above the global maximum.
func levelMaxSeats(pl *PriorityLevel, nominal int) int {
	if pl.Exempt || pl.Reject || pl.HandSize <= 0 {
		return maxSeatsLimit
	}
	n := max(1, min((nominal*levelMaxSeatsPercent+99)/100, nominal/int(pl.HandSize)))
	return min(n, maxSeatsLimit)
}

// listQuery is what the list estimator reads of a query.
type listQuery struct {
	limit                     int64
	resourceVersion, rvMatch  string
	hasContinue, hasSelectors bool
	singleName                bool // fieldSelector requires metadata.name
	sendInitialEvents         bool
	bad                       bool
}

// parseListQuery scans a raw query for the list options without building
// url.Values (no allocation unless a value is escaped).
func parseListQuery(raw string) listQuery {
	var q listQuery
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(kv, "=")
		if strings.ContainsAny(k, "%+") {
			u, err := url.QueryUnescape(k)
			if err != nil {
				q.bad = true
				continue
			}
			k = u
		}
		if strings.ContainsAny(v, "%+") {
			u, err := url.QueryUnescape(v)
			if err != nil {
				q.bad = true
				continue
			}
			v = u
		}
		switch k {
		case "limit":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				q.bad = true
			}
			q.limit = n
		case "resourceVersion":
			q.resourceVersion = v
		case "resourceVersionMatch":
			q.rvMatch = v
		case "continue":
			q.hasContinue = v != ""
		case "labelSelector":
			q.hasSelectors = q.hasSelectors || v != ""
		case "fieldSelector":
			q.hasSelectors = q.hasSelectors || v != ""
			q.singleName = q.singleName || fieldValue(v, "metadata.name") != ""
		case "sendInitialEvents":
			q.sendInitialEvents = v == "true"
		}
	}
	return q
}

// fieldValue is the value a field selector requires field to equal ("" if
// none).
func fieldValue(sel, field string) string {
	for sel != "" {
		var term string
		term, sel, _ = strings.Cut(sel, ",")
		rest, ok := strings.CutPrefix(strings.TrimSpace(term), field)
		if !ok {
			continue
		}
		if v, ok := strings.CutPrefix(rest, "=="); ok {
			return v
		}
		if v, ok := strings.CutPrefix(rest, "="); ok {
			return v
		}
	}
	return ""
}

// estimator estimates a request's seats from the stored objects' counts and
// the open watches, as Kubernetes' work estimator does.
type estimator struct {
	// counts is the objects per group-resource (nil before the first
	// refresh); replaced whole.
	counts func() map[countKey]int64
	// cacheServesConsistent: a list without resourceVersion (and without
	// limit and continue) is served from the watch cache.
	cacheServesConsistent bool
	watches               *watchTracker
}

func (e *estimator) estimate(ri *filters.RequestInfo, rawQuery string, maxSeats int) estimate {
	switch ri.Verb {
	case "list", "watch":
		return estimate{initial: e.listSeats(ri, rawQuery, maxSeats)}
	case "create", "update", "patch", "delete":
		return e.mutating(ri, maxSeats)
	}
	return estimate{initial: minSeats}
}

// listSeats is the seats of a list (or a watch sending its initial events):
// one per objectsPerSeat objects it will process. From the watch cache that
// is every stored object; from storage twice the objects returned (limit),
// or the stored objects plus the returned ones with a selector. A list of one
// name takes one seat, a list of an unknown resource the minimum.
func (e *estimator) listSeats(ri *filters.RequestInfo, rawQuery string, maxSeats int) int {
	if ri.Name != "" {
		return minSeats
	}
	var q listQuery
	if rawQuery != "" {
		q = parseListQuery(rawQuery)
	}
	switch {
	case q.bad:
		return maxSeats // refused later; as Kubernetes, charged the most
	case q.singleName:
		return minSeats
	case ri.Verb == "watch" && !q.sendInitialEvents:
		return minSeats
	}
	var n int64
	ok := false
	if e.counts != nil {
		if m := e.counts(); m != nil {
			n, ok = m[countKey{ri.APIGroup, ri.Resource}]
		}
	}
	if !ok {
		return minSeats
	}
	limit := n
	if q.limit > 0 && q.limit < n {
		limit = q.limit
	}
	var objects int64
	switch {
	case ri.Verb == "watch" || e.fromCache(&q):
		objects = n
	case q.hasSelectors:
		objects = n + limit
	default:
		objects = 2 * limit
	}
	seats := int(min((objects+objectsPerSeat-1)/objectsPerSeat, int64(maxSeats)))
	return max(seats, minSeats)
}

// fromCache reports whether the API server lists from its watch cache:
// resourceVersion set (not Exact) without continue, or the latest state
// whole when the cache can serve consistent reads.
func (e *estimator) fromCache(q *listQuery) bool {
	if q.hasContinue {
		return false
	}
	if q.resourceVersion != "" {
		return q.rvMatch != "Exact"
	}
	return e.cacheServesConsistent && q.limit <= 0
}

// mutating is a write's estimate: one seat while it runs and, when at least
// watchesPerSeat watches get its event, ceil(watches/watchesPerSeat) seats
// (at most maxSeats, the latency stretched to keep the work) held
// eventAdditionalDuration after it.
func (e *estimator) mutating(ri *filters.RequestInfo, maxSeats int) estimate {
	if ri.Resource == "serviceaccounts" && ri.Subresource == "token" {
		return estimate{initial: minSeats} // produces no event
	}
	w := 0
	if e.watches != nil {
		w = e.watches.interested(ri)
	}
	if w < watchesPerSeat {
		return estimate{initial: minSeats}
	}
	final := (w + watchesPerSeat - 1) / watchesPerSeat
	work := time.Duration(final) * eventAdditionalDuration
	final = min(final, maxSeats)
	return estimate{initial: minSeats, final: final, latency: work / time.Duration(final)}
}

// watchKey identifies a set of watches: resource, namespace ("" for all),
// name ("" for all).
type watchKey struct{ group, resource, namespace, name string }

// watchTracker counts the open watches, as Kubernetes' watch tracker does:
// a write's event goes to the resource's watches on all namespaces, on its
// namespace and on its name. Watches of pods on one node
// (spec.nodeName=...) are not counted (the watch cache indexes them).
type watchTracker struct {
	mu sync.Mutex
	n  map[watchKey]int
}

func newWatchTracker() *watchTracker { return &watchTracker{n: map[watchKey]int{}} }

// register counts a starting watch; the returned func forgets it (nil when
// it is not counted).
func (t *watchTracker) register(ri *filters.RequestInfo, rawQuery string) func() {
	name := ri.Name
	if sel := rawParam(rawQuery, "fieldSelector"); sel != "" {
		if ri.Resource == "pods" && fieldValue(sel, "spec.nodeName") != "" {
			return nil
		}
		if name == "" {
			name = fieldValue(sel, "metadata.name")
		}
	}
	k := watchKey{ri.APIGroup, ri.Resource, ri.Namespace, name}
	t.mu.Lock()
	t.n[k]++
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		if t.n[k]--; t.n[k] <= 0 {
			delete(t.n, k)
		}
		t.mu.Unlock()
	}
}

// interested is the number of watches a write described by ri notifies.
func (t *watchTracker) interested(ri *filters.RequestInfo) int {
	k := watchKey{group: ri.APIGroup, resource: ri.Resource}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.n) == 0 {
		return 0
	}
	n := t.n[k]
	if ri.Namespace != "" {
		k.namespace = ri.Namespace
		n += t.n[k]
	}
	if ri.Name != "" {
		k.name = ri.Name
		n += t.n[k]
	}
	return n
}

// rawParam is the unescaped value of key in a raw query ("" when absent or
// malformed).
func rawParam(raw, key string) string {
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		if k, v, _ := strings.Cut(kv, "="); k == key {
			if u, err := url.QueryUnescape(v); err == nil {
				return u
			}
			return ""
		}
	}
	return ""
}
