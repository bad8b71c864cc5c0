package nodeauth

import (
	"net/http/httptest"
	"testing"
)

func TestAttributes(t *testing.T) {
	for _, tc := range []struct{ method, path, verb, sub string }{
		{"GET", "/metrics", "get", "metrics"},
		{"GET", "/metrics/resource", "get", "metrics"},
		{"GET", "/metricsfoo", "get", "proxy"},
		{"GET", "/stats/summary", "get", "stats"},
		{"GET", "/containerLogs/ns/pod/c", "get", "proxy"},
		{"POST", "/exec/ns/pod/c", "create", "proxy"},
		{"GET", "/healthz", "get", "proxy"},
	} {
		verb, sub := attributes(httptest.NewRequest(tc.method, tc.path, nil))
		if verb != tc.verb || sub != tc.sub {
			t.Errorf("%s %s: %s nodes/%s, want %s nodes/%s", tc.method, tc.path, verb, sub, tc.verb, tc.sub)
		}
	}
}
