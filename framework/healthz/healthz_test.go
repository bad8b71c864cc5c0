package healthz_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/healthz"
)

// TestHandler: named checks (slashes allowed, as poststarthook/<hook>), one
// check by path, ?verbose, ?exclude and the failure summary named after the
// endpoint.
func TestHandler(t *testing.T) {
	h := &healthz.Handler{Endpoint: "readyz"}
	var late error = errors.New("not yet")
	for name, c := range map[string]healthz.Checker{
		"ping":               healthz.Ping,
		"poststarthook/late": func(*http.Request) error { return late },
	} {
		if err := h.AddCheck(name, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{"", "/x", "x/", "a//b"} {
		if err := h.AddCheck(bad, healthz.Ping); err == nil {
			t.Errorf("AddCheck(%q) accepted", bad)
		}
	}
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	for _, tt := range []struct {
		path string
		code int
		body string
	}{
		{"/readyz", 500, "[-]poststarthook/late failed: not yet\nreadyz check failed"},
		{"/readyz?exclude=poststarthook/late", 200, "ok"},
		{"/readyz/poststarthook/late", 500, "internal server error: not yet"},
		{"/readyz/ping", 200, "ok"},
		{"/readyz/late", 404, "not found"},
	} {
		if code, body := get(tt.path); code != tt.code || !strings.Contains(body, tt.body) {
			t.Errorf("%s: %d %q, want %d with %q", tt.path, code, body, tt.code, tt.body)
		}
	}
	late = nil
	if code, body := get("/readyz?verbose"); code != 200 || body != "[+]ping ok\n[+]poststarthook/late ok\nreadyz check passed" {
		t.Errorf("verbose: %d %q", code, body)
	}
}
