package admission

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestWebhookTimeout: the call tells the webhook its deadline (?timeout=1s,
// as kube-apiserver's client does) and a webhook slower than timeoutSeconds
// fails the request naming the URL and the deadline (upstream's "should
// honor timeout" spec looks for both), or is skipped under Ignore.
func TestWebhookTimeout(t *testing.T) {
	t.Parallel()
	queries := make(chan string, 4)
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries <- r.URL.RawQuery
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	for _, policy := range []string{"Fail", "Ignore"} {
		hook := Hook{Name: "slow.example.com", URL: srv.URL + "/always-allow-delay-5s", CABundle: ca, FailurePolicy: policy,
			SideEffects: "None", TimeoutSeconds: 1, MatchPolicy: "Exact",
			Rules: []Rule{{Operations: []string{"CREATE"}, APIGroups: []string{"example.com"}, APIVersions: []string{"v2"}, Resources: []string{"widgets"}, Scope: "*"}}}
		w := &Webhooks{Hooks: func(context.Context) ([]Hook, error) { return []Hook{hook}, nil }}
		start := time.Now()
		err := w.Validate(context.Background(), widgetV2(1))
		took := time.Since(start)
		if q := <-queries; q != "timeout=1s" {
			t.Errorf("%s: webhook query %q, want timeout=1s", policy, q)
		}
		if took > 5*time.Second {
			t.Errorf("%s: the call took %v, want about 1s", policy, took)
		}
		switch policy {
		case "Fail":
			if err == nil || !strings.Contains(err.Error(), "/always-allow-delay-5s?timeout=1s") ||
				!strings.Contains(err.Error(), "context deadline exceeded") {
				t.Errorf("Fail: got %v, want a deadline error naming the URL with ?timeout=1s", err)
			}
		case "Ignore":
			if err != nil {
				t.Errorf("Ignore: got %v, want the slow webhook skipped", err)
			}
		}
	}
}
