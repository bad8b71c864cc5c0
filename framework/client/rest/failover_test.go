package rest_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client/rest"
)

// countingServer answers 200 with its name, or code when code != 0.
type countingServer struct {
	*httptest.Server
	calls atomic.Int32
	code  atomic.Int32
}

func newCountingServer(t *testing.T, name string) *countingServer {
	t.Helper()
	s := &countingServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		if c := s.code.Load(); c != 0 {
			w.WriteHeader(int(c))
			return
		}
		_, _ = w.Write([]byte(name))
	}))
	t.Cleanup(s.Close)
	return s
}

// closedURL is the URL of a loopback port nobody listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	l.Close()
	return u
}

func TestFailoverRefusedPostIsResentAndSticky(t *testing.T) {
	t.Parallel()
	b := newCountingServer(t, "b")
	down := closedURL(t)
	c := newClient(t, rest.Config{Host: down, Hosts: []string{b.URL}})
	start := time.Now()
	resp, err := c.Do(t.Context(), rest.Request{Method: http.MethodPost, Path: "/x", Body: []byte(`{}`)})
	if err != nil || string(resp.Body) != "b" {
		t.Fatalf("POST with the first server down: %v, %v", resp, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("failover took %s, want immediate", d)
	}
	if c.Host() != b.URL {
		t.Fatalf("Host() = %s after failover, want %s", c.Host(), b.URL)
	}
	// Sticky: the next requests go straight to b.
	for range 5 {
		if _, err := c.Do(t.Context(), rest.Request{Method: http.MethodGet, Path: "/x"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.calls.Load(); got != 6 {
		t.Fatalf("b got %d calls, want 6", got)
	}
	if got := c.Hosts(); len(got) != 2 || got[0] != down || got[1] != b.URL {
		t.Fatalf("Hosts() = %v", got)
	}
}

func TestFailover503(t *testing.T) {
	t.Parallel()
	a := newCountingServer(t, "a")
	b := newCountingServer(t, "b")
	a.code.Store(http.StatusServiceUnavailable)
	c := newClient(t, rest.Config{Host: a.URL, Hosts: []string{b.URL}})

	// A GET answered 503 goes to the next server.
	resp, err := c.Do(t.Context(), rest.Request{Method: http.MethodGet, Path: "/x"})
	if err != nil || string(resp.Body) != "b" {
		t.Fatalf("GET: %v, %v", resp, err)
	}
	// A POST answered 503 without Retry-After may have been processed: not
	// re-sent; it fails, and moves the client on.
	b.code.Store(http.StatusServiceUnavailable)
	a.code.Store(0)
	_, err = c.Do(t.Context(), rest.Request{Method: http.MethodPost, Path: "/x", Body: []byte(`{}`)})
	if !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("POST answered 503: %v", err)
	}
	if b.calls.Load() != 2 || c.Host() != a.URL {
		t.Fatalf("b calls %d, host %s", b.calls.Load(), c.Host())
	}
}

func TestFailoverNeverResendsSentPost(t *testing.T) {
	t.Parallel()
	// a reads the request, then drops the connection without answering: the
	// POST may have been applied, so it must not go to b.
	var aCalls atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			aCalls.Add(1)
			buf := make([]byte, 4096)
			_, _ = conn.Read(buf)
			conn.Close()
		}
	})
	b := newCountingServer(t, "b")
	c := newClient(t, rest.Config{Host: "http://" + ln.Addr().String(), Hosts: []string{b.URL}})
	_, err = c.Do(t.Context(), rest.Request{Method: http.MethodPost, Path: "/x", Body: []byte(`{}`)})
	if err == nil {
		t.Fatal("POST to a server that hung up succeeded")
	}
	if b.calls.Load() != 0 {
		t.Fatalf("a sent POST was re-sent to b (%d calls)", b.calls.Load())
	}
	// A GET that fails the same way is retried on b.
	resp, err := c.Do(t.Context(), rest.Request{Method: http.MethodGet, Path: "/x"})
	if err != nil || string(resp.Body) != "b" {
		t.Fatalf("GET: %v, %v", resp, err)
	}
}

func TestFailoverAllDownIsBounded(t *testing.T) {
	t.Parallel()
	c := newClient(t, rest.Config{Hosts: []string{closedURL(t), closedURL(t), closedURL(t)}, MaxTries: 2})
	start := time.Now()
	_, err := c.Do(t.Context(), rest.Request{Method: http.MethodPost, Path: "/x", Body: []byte(`{}`)})
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("all servers down: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("gave up after %s", d)
	}
}

func TestFailoverConcurrentFailuresMoveOnce(t *testing.T) {
	t.Parallel()
	a := newCountingServer(t, "a")
	b := newCountingServer(t, "b")
	cc := newCountingServer(t, "c")
	down := closedURL(t)
	c := newClient(t, rest.Config{Host: down, Hosts: []string{a.URL, b.URL, cc.URL}})
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if _, err := c.Do(t.Context(), rest.Request{Method: http.MethodGet, Path: "/x"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// Every request failed on the down server at most once and then went to a;
	// the shared cursor moved once, so b and c saw nothing.
	if a.calls.Load() != 16 || b.calls.Load()+cc.calls.Load() != 0 {
		t.Fatalf("calls a=%d b=%d c=%d, want 16/0/0", a.calls.Load(), b.calls.Load(), cc.calls.Load())
	}
}

func TestConfigHostsInvalid(t *testing.T) {
	t.Parallel()
	_, err := rest.NewClient(&rest.Config{Host: "http://ok:1", Hosts: []string{"ftp://x:1", "http://"}})
	if err == nil || !strings.Contains(err.Error(), "ftp://x:1") {
		t.Fatalf("NewClient: %v", err)
	}
	c, err := rest.NewClient(&rest.Config{Host: "http://a:1", Hosts: []string{"http://a:1", "", "http://b:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Hosts(); len(got) != 2 {
		t.Fatalf("duplicates kept: %v", got)
	}
}
