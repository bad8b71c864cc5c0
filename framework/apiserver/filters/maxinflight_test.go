package filters

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

func TestShare(t *testing.T) {
	for _, tc := range []struct{ total, percent, want int }{
		{0, 50, 0}, {1, 50, 1}, {10, 50, 5}, {10, 100, 0}, {3, 10, 1}, {400, 25, 100},
	} {
		if got := share(tc.total, tc.percent); got != tc.want {
			t.Errorf("share(%d, %d) = %d, want %d", tc.total, tc.percent, got, tc.want)
		}
	}
}

// TestPerUserShareAndWatchLimit: a user holding its share of the budget gets
// 429 while another user still gets through; watches are counted per user.
func TestPerUserShareAndWatchLimit(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 16)
	h := WithRequestInfoFilter(WithMaxInFlight(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}), MaxInFlightOptions{ReadOnly: 4, PerUserPercent: 50, MaxWatchesPerUser: 1}))
	as := func(user, url string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, url, nil)
		return r.WithContext(WithUser(r.Context(), &User{Name: user}))
	}
	var wg sync.WaitGroup
	hold := func(r *http.Request) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.ServeHTTP(httptest.NewRecorder(), r)
		}()
		<-entered
	}
	code := func(r *http.Request) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	const pods = "/api/v1/namespaces/d/pods"
	hold(as("greedy", pods))
	hold(as("greedy", pods))
	if c := code(as("greedy", pods)); c != http.StatusTooManyRequests {
		t.Errorf("greedy's third request: %d, want 429", c)
	}
	hold(as("polite", pods))
	hold(as("other", pods))
	if c := code(as("third", pods)); c != http.StatusTooManyRequests {
		t.Errorf("request beyond the total budget: %d, want 429", c)
	}
	hold(as("greedy", pods+"?watch=1"))
	if c := code(as("greedy", pods+"?watch=1")); c != http.StatusTooManyRequests {
		t.Errorf("greedy's second watch: %d, want 429", c)
	}
	hold(as("polite", pods+"?watch=1"))
	close(release)
	wg.Wait()
	// Everything was released (release stays closed): greedy may list again.
	if c := code(as("greedy", pods)); c != http.StatusOK {
		t.Errorf("after release: %d, want 200", c)
	}
}
