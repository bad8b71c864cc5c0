package flowcontrol

import (
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

func TestListSeats(t *testing.T) {
	t.Parallel()
	counts := map[countKey]int64{{"", "pods"}: 1000, {"", "configmaps"}: 300, {"apps", "deployments"}: 250}
	for _, tc := range []struct {
		name       string
		url        string
		consistent bool // the cache serves consistent lists
		maxSeats   int
		want       int
	}{
		{"from storage: twice the objects", "/api/v1/pods", false, 10, 10},
		{"from storage, limit: twice the limit", "/api/v1/pods?limit=50", false, 10, 1},
		{"from storage, limit 200", "/api/v1/pods?limit=200", false, 10, 4},
		{"consistent from cache: every object", "/api/v1/configmaps", true, 10, 3},
		{"consistent with limit goes to storage", "/api/v1/configmaps?limit=100", true, 10, 2},
		{"rv=0 from cache: every object, limit ignored", "/api/v1/configmaps?resourceVersion=0&limit=10", false, 10, 3},
		{"NotOlderThan from cache", "/apis/apps/v1/deployments?resourceVersion=5&resourceVersionMatch=NotOlderThan", false, 10, 3},
		{"Exact from storage", "/api/v1/configmaps?resourceVersion=5&resourceVersionMatch=Exact&limit=10", true, 10, 1},
		{"continue from storage", "/api/v1/configmaps?continue=abc&limit=100", true, 10, 2},
		{"selector from storage: stored plus returned", "/api/v1/configmaps?labelSelector=a%3Db&limit=100", false, 10, 4},
		{"one name", "/api/v1/pods?fieldSelector=metadata.name%3Dp1", false, 10, 1},
		{"one name (==)", "/api/v1/pods?fieldSelector=status.phase%3DRunning,metadata.name%3D%3Dp1", false, 10, 1},
		{"level's maximum", "/api/v1/pods", false, 3, 3},
		{"unknown resource: minimum", "/apis/example.com/v1/widgets", false, 10, 1},
		{"malformed limit: maximum", "/api/v1/configmaps?limit=x", false, 7, 7},
		{"namespaced counts the resource's objects", "/api/v1/namespaces/a/configmaps", false, 10, 6},
		{"watch without initial events", "/api/v1/pods?watch=1", false, 10, 1},
		{"watch with initial events: every object", "/api/v1/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", false, 10, 3},
		{"get", "/api/v1/namespaces/a/pods/p", false, 10, 1},
	} {
		e := &estimator{counts: func() map[countKey]int64 { return counts }, cacheServesConsistent: tc.consistent}
		r := httptest.NewRequest("GET", tc.url, nil)
		got := e.estimate(filters.NewRequestInfo(r), r.URL.RawQuery, tc.maxSeats)
		if got.initial != tc.want || got.final != 0 {
			t.Errorf("%s (%s): %+v, want %d seats", tc.name, tc.url, got, tc.want)
		}
	}
}

func TestMutatingEstimate(t *testing.T) {
	t.Parallel()
	w := newWatchTracker()
	watch := func(url string, n int) {
		r := httptest.NewRequest("GET", url, nil)
		ri := filters.NewRequestInfo(r)
		for range n {
			w.register(ri, r.URL.RawQuery)
		}
	}
	watch("/api/v1/configmaps?watch=1", 12)                                             // every namespace
	watch("/api/v1/namespaces/a/configmaps?watch=1", 9)                                 // namespace a
	watch("/api/v1/namespaces/a/configmaps?watch=1&fieldSelector=metadata.name%3Dc", 4) // one name
	watch("/api/v1/namespaces/b/configmaps?watch=1", 200)
	watch("/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dn1", 50) // node-scoped: not counted
	e := &estimator{watches: w}
	for _, tc := range []struct {
		method, url string
		maxSeats    int
		want        estimate
	}{
		{"POST", "/api/v1/namespaces/c/configmaps", 10, estimate{initial: 1, final: 2, latency: 5 * time.Millisecond}},       // 12 watches
		{"PUT", "/api/v1/namespaces/a/configmaps/c", 10, estimate{initial: 1, final: 3, latency: 5 * time.Millisecond}},      // 12+9+4
		{"PUT", "/api/v1/namespaces/a/configmaps/d", 10, estimate{initial: 1, final: 3, latency: 5 * time.Millisecond}},      // 21
		{"DELETE", "/api/v1/namespaces/b/configmaps/x", 10, estimate{initial: 1, final: 10, latency: 11 * time.Millisecond}}, // 212: 22 seats of work on 10
		{"POST", "/api/v1/namespaces/a/secrets", 10, estimate{initial: 1}},                                                   // no watches
		{"POST", "/api/v1/namespaces/a/pods", 10, estimate{initial: 1}},                                                      // node watches only
		{"POST", "/api/v1/namespaces/a/serviceaccounts/s/token", 10, estimate{initial: 1}},
		{"GET", "/api/v1/namespaces/b/configmaps/x", 10, estimate{initial: 1}},
	} {
		r := httptest.NewRequest(tc.method, tc.url, nil)
		if got := e.estimate(filters.NewRequestInfo(r), r.URL.RawQuery, tc.maxSeats); got != tc.want {
			t.Errorf("%s %s: %+v, want %+v", tc.method, tc.url, got, tc.want)
		}
	}
	forget := w.register(filters.NewRequestInfo(httptest.NewRequest("GET", "/api/v1/secrets?watch=1", nil)), "watch=1")
	forget()
	if len(w.n) != 4 {
		t.Errorf("a forgotten watch leaves no entry: %v", w.n)
	}
}

func TestLevelMaxSeats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pl      PriorityLevel
		nominal int
		want    int
	}{
		{PriorityLevel{Queues: 128, HandSize: 6}, 49, 8}, // ceil(7.35)=8, 49/6=8
		{PriorityLevel{Queues: 128, HandSize: 6}, 10, 1}, // min(2, 1)
		{PriorityLevel{Queues: 64, HandSize: 4}, 98, 10}, // min(15, 24), capped at 10
		{PriorityLevel{Queues: 64, HandSize: 8}, 3, 1},   // at least one
		{PriorityLevel{Reject: true}, 5, maxSeatsLimit},  // no queues: the global maximum
		{PriorityLevel{Exempt: true}, 0, maxSeatsLimit},
	} {
		if got := levelMaxSeats(&tc.pl, tc.nominal); got != tc.want {
			t.Errorf("levelMaxSeats(%+v, %d) = %d, want %d", tc.pl, tc.nominal, got, tc.want)
		}
	}
}

// FuzzParseListQuery: the raw-query scanner reads the list options as
// url.ParseQuery does, for queries it accepts with each option once.
func FuzzParseListQuery(f *testing.F) {
	for _, s := range []string{"", "limit=500&resourceVersion=0", "labelSelector=a%3Db&fieldSelector=metadata.name%3Dx",
		"continue=abc&limit=x", "%6Cimit=5", "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&watch=1", "a=%zz", "limit=+1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := parseListQuery(raw)
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		for _, vals := range v {
			if len(vals) > 1 {
				return
			}
		}
		want := listQuery{resourceVersion: v.Get("resourceVersion"), rvMatch: v.Get("resourceVersionMatch"),
			hasContinue: v.Get("continue") != "", hasSelectors: v.Get("labelSelector") != "" || v.Get("fieldSelector") != "",
			singleName: fieldValue(v.Get("fieldSelector"), "metadata.name") != "", sendInitialEvents: v.Get("sendInitialEvents") == "true"}
		if l := v.Get("limit"); v.Has("limit") {
			n, err := strconv.ParseInt(l, 10, 64)
			want.limit, want.bad = n, err != nil
		}
		if got != want {
			t.Errorf("parseListQuery(%q) = %+v, want %+v", raw, got, want)
		}
	})
}
