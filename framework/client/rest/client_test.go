package rest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client/rest"
)

func newClient(t *testing.T, cfg rest.Config) *rest.Client {
	t.Helper()
	c, err := rest.NewClient(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func TestRetryAfter429(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	c := newClient(t, rest.Config{Host: srv.URL})
	start := time.Now()
	// POST is not idempotent, but a 429 with Retry-After is retried for any method.
	resp, err := c.Do(t.Context(), rest.Request{Method: http.MethodPost, Path: "/x", Body: []byte(`{}`)})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if string(resp.Body) != `{"ok":true}` || calls.Load() != 2 {
		t.Fatalf("body %s after %d calls", resp.Body, calls.Load())
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("retried after %v, want about 1s (Retry-After)", d)
	}
}

func TestRetriesAreBounded(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c := newClient(t, rest.Config{Host: srv.URL, MaxTries: 3})
	_, err := c.Do(t.Context(), rest.Request{Method: http.MethodGet, Path: "/x"})
	if !apierrors.IsServiceUnavailable(err) || calls.Load() != 3 {
		t.Fatalf("err = %v after %d calls, want ServiceUnavailable after 3", err, calls.Load())
	}
}

func TestNoRetryWithoutRetryAfter(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	c := newClient(t, rest.Config{Host: srv.URL})
	_, err := c.Do(t.Context(), rest.Request{Method: http.MethodPut, Path: "/x", Body: []byte("{}")})
	if !apierrors.IsInternalError(err) || calls.Load() != 1 {
		t.Fatalf("err = %v after %d calls", err, calls.Load())
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		method string
		code   int
		body   string
		check  func(error) bool
		msg    string
	}{
		{"status body", http.MethodGet, 404, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"p\" not found","reason":"NotFound","code":404}`, apierrors.IsNotFound, `pods "p" not found`},
		{"plain 404", http.MethodGet, 404, "404 page not found", apierrors.IsNotFound, "the server could not find the requested resource (404 page not found)"},
		{"plain 409 on PUT", http.MethodPut, 409, "", apierrors.IsConflict, "the server reported a conflict"},
		{"plain 409 on POST", http.MethodPost, 409, "", apierrors.IsAlreadyExists, "the server reported a conflict"},
		{"plain 422", http.MethodPut, 422, "", apierrors.IsInvalid, "the server rejected our request due to an error in our request"},
		{"plain 403", http.MethodGet, 403, "", apierrors.IsForbidden, "the server does not allow access to the requested resource"},
		{"plain 401", http.MethodGet, 401, "", apierrors.IsUnauthorized, "the server has asked for the client to provide credentials"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c := newClient(t, rest.Config{Host: srv.URL})
			_, err := c.Do(t.Context(), rest.Request{Method: tc.method, Path: "/x"})
			if !tc.check(err) {
				t.Fatalf("err = %#v", err)
			}
			if err.Error() != tc.msg {
				t.Fatalf("message = %q, want %q", err.Error(), tc.msg)
			}
			if apierrors.CodeForError(err) != tc.code {
				t.Fatalf("code = %d", apierrors.CodeForError(err))
			}
		})
	}
}

func TestAuthAndUserAgent(t *testing.T) {
	t.Parallel()
	var auth, ua atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		ua.Store(r.Header.Get("User-Agent"))
	}))
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, rest.Config{Host: srv.URL, BearerTokenFile: tokenFile, UserAgent: "test/1"})
	do := func() string {
		t.Helper()
		if _, err := c.Do(t.Context(), rest.Request{Method: http.MethodGet, Path: "/"}); err != nil {
			t.Fatal(err)
		}
		return auth.Load().(string)
	}
	if got := do(); got != "Bearer one" || ua.Load() != "test/1" {
		t.Fatalf("auth %q ua %q", got, ua.Load())
	}
	// A rotated token (new content and mtime) is picked up.
	if err := os.WriteFile(tokenFile, []byte("second"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(tokenFile, later, later); err != nil {
		t.Fatal(err)
	}
	if got := do(); got != "Bearer second" {
		t.Fatalf("after rotation auth = %q", got)
	}

	basic := newClient(t, rest.Config{Host: srv.URL, Username: "u", Password: "p"})
	if _, err := basic.Do(t.Context(), rest.Request{Method: http.MethodGet, Path: "/"}); err != nil {
		t.Fatal(err)
	}
	if got := auth.Load().(string); got != "Basic dTpw" {
		t.Fatalf("basic auth = %q", got)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	c := newClient(t, rest.Config{Host: srv.URL, QPS: 20, Burst: 1})
	start := time.Now()
	for range 5 {
		if _, err := c.Do(t.Context(), rest.Request{Method: http.MethodGet, Path: "/"}); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 180*time.Millisecond {
		t.Fatalf("5 requests at 20 QPS with burst 1 took %v, want >= 200ms", d)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Do(ctx, rest.Request{Method: http.MethodGet, Path: "/"}); err == nil {
		t.Fatal("Do with a cancelled context succeeded")
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, cfg := range []rest.Config{
		{},
		{Host: "ftp://x"},
		{Host: "https://x", TLS: rest.TLSConfig{CertFile: "/c"}},
		{Host: "https://x", TLS: rest.TLSConfig{CAData: []byte("not pem")}},
	} {
		if _, err := rest.NewClient(&cfg); err == nil {
			t.Errorf("NewClient(%+v) succeeded", cfg)
		}
	}
}
