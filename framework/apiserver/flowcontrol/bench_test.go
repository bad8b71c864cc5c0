package flowcontrol

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// BenchmarkFilter compares the priority and fairness filter with the
// max-in-flight filter it replaces, on the same requests (a list by one of 16
// users, request info and user already in the context, as behind
// authentication; its resource has 50 stored objects, so the work estimator
// looks its count up), in parallel, with limits never reached: the cost every
// request pays.
//
//	go test ./framework/apiserver/flowcontrol -run '^$' -bench Filter -benchmem
func BenchmarkFilter(b *testing.B) {
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	reqs := make([]*http.Request, 16)
	for i := range reqs {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/ns/configmaps", nil)
		ctx := filters.WithUser(r.Context(), &filters.User{Name: "user-" + strconv.Itoa(i), Groups: []string{"devs", "system:authenticated"}})
		reqs[i] = r.WithContext(filters.WithRequestInfo(ctx, filters.NewRequestInfo(r)))
	}
	run := func(b *testing.B, h http.Handler, reqs []*http.Request) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			w := &discard{h: http.Header{}}
			i := 0
			for pb.Next() {
				h.ServeHTTP(w, reqs[i%len(reqs)])
				i++
			}
		})
	}
	b.Run("maxinflight", func(b *testing.B) {
		run(b, filters.WithMaxInFlight(noop, filters.MaxInFlightOptions{Mutating: 200, ReadOnly: 400, PerUserPercent: 50}), reqs)
	})
	b.Run("apf", func(b *testing.B) {
		c := New(Options{ServerConcurrencyLimit: 600, ObjectCounts: func() map[string]int64 {
			return map[string]int64{"configmaps": 50, "pods": 1000, "deployments.apps": 10}
		}}, benchConfig())
		c.RefreshObjectCounts()
		run(b, c.Filter(noop), reqs)
	})
	// A watch (resourceVersion=0: initial events) holds its seat until it
	// signals that its initial events are sent, as the watch handler does.
	watches := make([]*http.Request, len(reqs))
	for i, r := range reqs {
		w := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/ns/configmaps?watch=1&resourceVersion=0", nil)
		u, _ := filters.UserFrom(r.Context())
		ctx := filters.WithUser(w.Context(), u)
		watches[i] = w.WithContext(filters.WithRequestInfo(ctx, filters.NewRequestInfo(w)))
	}
	initialized := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { filters.WatchInitialized(r.Context()) })
	b.Run("apf-watch", func(b *testing.B) {
		c := New(Options{ServerConcurrencyLimit: 600}, benchConfig())
		run(b, c.Filter(initialized), watches)
	})
}

// benchConfig is shaped like Kubernetes' defaults: the request matches the
// tenth schema (global-default).
func benchConfig() Config {
	cfg := testConfig()
	for i := range 6 {
		cfg.FlowSchemas = append(cfg.FlowSchemas, FlowSchema{Name: "sa-" + strconv.Itoa(i), MatchingPrecedence: int32(700 + i),
			PriorityLevel: "workload-high", Rules: []Rule{everything(Subject{ServiceAccount: &ServiceAccount{Namespace: "kube-system", Name: "*"}})}})
	}
	return cfg
}

type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}
