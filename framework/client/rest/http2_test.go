package rest_test

import (
	"bufio"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/converge-dev/converge/framework/client/rest"
)

// http2Server is an HTTPS server offering HTTP/2 that counts its connections,
// and a client config trusting it.
func http2Server(t *testing.T, h http.Handler) (*atomic.Int32, rest.Config) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	conns := new(atomic.Int32)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return conns, rest.Config{Host: srv.URL, TLS: rest.TLSConfig{CAData: ca}}
}

// TestConcurrentRequestsShareOneHTTP2Connection sends 64 requests that are all
// in flight at once, from a client with no connection yet: over HTTP/2 they
// share one connection (one TLS handshake).
func TestConcurrentRequestsShareOneHTTP2Connection(t *testing.T) {
	t.Parallel()
	const n = 64
	var arrived sync.WaitGroup
	arrived.Add(n)
	var notH2 atomic.Int32
	conns, cfg := http2Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			notH2.Add(1)
		}
		arrived.Done()
		arrived.Wait() // answer only once all n are in flight together
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{}`)
	}))
	c := newClient(t, cfg)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := c.Do(t.Context(), rest.Request{Method: http.MethodGet, Path: "/api/v1/namespaces"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if notH2.Load() != 0 {
		t.Fatalf("%d of %d requests did not use HTTP/2", notH2.Load(), n)
	}
	if got := conns.Load(); got != 1 {
		t.Fatalf("%d concurrent requests used %d connections, want 1", n, got)
	}
}

// TestStreamOverHTTP2 reads a watch-like stream whose events are flushed one
// at a time: each arrives before the server writes the next.
func TestStreamOverHTTP2(t *testing.T) {
	t.Parallel()
	next := make(chan struct{})
	_, cfg := http2Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			http.Error(w, "want HTTP/2", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		for i := range 3 {
			if i > 0 {
				select {
				case <-next:
				case <-r.Context().Done():
					return
				}
			}
			_, _ = io.WriteString(w, `{"type":"ADDED"}`+"\n")
			_ = http.NewResponseController(w).Flush()
		}
	}))
	c := newClient(t, cfg)
	body, err := c.Stream(t.Context(), rest.Request{Method: http.MethodGet, Path: "/api/v1/pods", Query: map[string][]string{"watch": {"1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	rd := bufio.NewReader(body)
	for i := range 3 {
		line, err := rd.ReadString('\n')
		if err != nil || line != `{"type":"ADDED"}`+"\n" {
			t.Fatalf("event %d: %q, %v", i, line, err)
		}
		if i < 2 {
			next <- struct{}{}
		}
	}
	if _, err := rd.ReadByte(); err != io.EOF {
		t.Fatalf("after the last event: %v, want EOF", err)
	}
}

// TestConcurrentRequestsOverHTTP1 checks that requests to an HTTPS server
// without HTTP/2 still run concurrently, each on its own connection, once the
// first connection is established.
func TestConcurrentRequestsOverHTTP1(t *testing.T) {
	t.Parallel()
	const n = 8
	var arrived sync.WaitGroup
	arrived.Add(n)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 1 {
			t.Errorf("proto %s, want HTTP/1.1", r.Proto)
		}
		arrived.Done()
		arrived.Wait() // all n must be in flight together
		_, _ = io.WriteString(w, `{}`)
	}))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	c := newClient(t, rest.Config{Host: srv.URL, TLS: rest.TLSConfig{CAData: ca}})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := c.Do(t.Context(), rest.Request{Method: http.MethodGet, Path: "/api"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
