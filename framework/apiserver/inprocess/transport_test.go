package inprocess_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/apiserver/inprocess"
	"github.com/converge-dev/converge/framework/client/rest"
)

// rejectAll is an authenticator that accepts no credentials.
type rejectAll struct{}

func (rejectAll) Authenticate(*http.Request) (*filters.User, bool, error) {
	return nil, false, errors.New("no credentials accepted")
}

func get(t *testing.T, tr http.RoundTripper, ctx context.Context, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer someone-else")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	return resp
}

func TestIdentityThroughAuthentication(t *testing.T) {
	t.Parallel()
	var seen *filters.User
	var path, query, remote, authz string
	var tlsState bool
	h := filters.WithAuthentication(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, _ = filters.UserFrom(r.Context())
		path, query, remote, authz, tlsState = r.URL.Path, r.URL.RawQuery, r.RemoteAddr, r.Header.Get("Authorization"), r.TLS != nil
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "done")
	}), rejectAll{}, filters.AuthenticationOptions{})
	tr := inprocess.New(h, filters.User{Name: "system:kube-scheduler", Groups: []string{"g"}})
	resp := get(t, tr, context.Background(), "https://127.0.0.1:6443/api/v1/pods?limit=1")
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != "done" || resp.StatusCode != http.StatusCreated || resp.Header.Get("Content-Type") != "text/plain" {
		t.Fatalf("response %d %q %v %v", resp.StatusCode, b, resp.Header, err)
	}
	if seen == nil || seen.Name != "system:kube-scheduler" || !slices.Equal(seen.Groups, []string{"g", filters.GroupAuthenticated}) {
		t.Errorf("user %+v, want system:kube-scheduler in g and %s", seen, filters.GroupAuthenticated)
	}
	if path != "/api/v1/pods" || query != "limit=1" || remote != "127.0.0.1:0" || tlsState {
		t.Errorf("request path %q query %q remote %q TLS %v", path, query, remote, tlsState)
	}
	// The header is passed on as sent; it is not what authenticated the request.
	if authz != "Bearer someone-else" {
		t.Errorf("Authorization %q", authz)
	}
}

func TestStreamsBeforeTheHandlerReturns(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, "second\n")
	})
	resp := get(t, inprocess.New(h, filters.User{Name: "u"}), context.Background(), "http://x/watch")
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); line != "first\n" || err != nil {
		t.Fatalf("first line %q %v", line, err)
	}
	close(release)
	if line, err := br.ReadString('\n'); line != "second\n" || err != nil {
		t.Fatalf("second line %q %v", line, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after the handler returned: %v, want EOF", err)
	}
}

func TestClosingTheBodyEndsTheHandler(t *testing.T) {
	t.Parallel()
	ended := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		for {
			if _, err := w.Write(make([]byte, 64<<10)); err != nil {
				<-r.Context().Done()
				ended <- err
				return
			}
		}
	})
	resp := get(t, inprocess.New(h, filters.User{Name: "u"}), context.Background(), "http://x/")
	if _, err := io.ReadFull(resp.Body, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("write after close succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler still writes after the body was closed")
	}
}

func TestBackPressure(t *testing.T) {
	t.Parallel()
	written := make(chan int, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		n := 0
		for range 64 {
			m, err := w.Write(make([]byte, 64<<10)) // 4 MiB in all
			n += m
			if err != nil {
				break
			}
		}
		written <- n
	})
	resp := get(t, inprocess.New(h, filters.User{Name: "u"}), context.Background(), "http://x/")
	defer resp.Body.Close()
	select {
	case n := <-written:
		t.Fatalf("the handler wrote %d bytes nobody read", n)
	case <-time.After(200 * time.Millisecond):
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || n != 4<<20 {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	<-written
}

func TestClientContextEnds(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stuck" {
			<-r.Context().Done()
			return
		}
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	tr := inprocess.New(h, filters.User{Name: "u"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://x/stuck", nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("before the header: %v, want the context's error", err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	resp := get(t, tr, ctx2, "http://x/stream")
	cancel2()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Errorf("reading after the context ended: %v, want context.Canceled", err)
	}
}

func TestAbortedHandler(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "partial")
		panic(http.ErrAbortHandler)
	})
	resp := get(t, inprocess.New(h, filters.User{Name: "u"}), context.Background(), "http://x/")
	if b, err := io.ReadAll(resp.Body); err == nil || string(b) != "partial" {
		t.Errorf("read %q, %v; want the partial body and an error", b, err)
	}
}

func TestRestClientUsesTheTransport(t *testing.T) {
	t.Parallel()
	h := filters.WithAuthentication(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := filters.UserFrom(r.Context())
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"user":"`+u.Name+`","agent":"`+r.UserAgent()+`"}`)
	}), rejectAll{}, filters.AuthenticationOptions{})
	// The TLS settings name files that do not exist: with a Transport they are
	// not used.
	c, err := rest.NewClient(&rest.Config{Host: "https://127.0.0.1:1", UserAgent: "ua", TLS: rest.TLSConfig{CAFile: "/nonexistent"},
		Transport: inprocess.New(h, filters.User{Name: "component"})})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(context.Background(), rest.Request{Method: http.MethodGet, Path: "/api"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(resp.Body); !strings.Contains(got, `"user":"component"`) || !strings.Contains(got, `"agent":"ua"`) {
		t.Errorf("body %s", got)
	}
}

// TestQuickAnswersAreNotCancelled: a handler that answers and returns at once
// also ends the request's context; RoundTrip must return its answer, never
// "context canceled" (the two were picked at random, one request in many).
func TestQuickAnswersAreNotCancelled(t *testing.T) {
	t.Parallel()
	tr := inprocess.New(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }),
		filters.User{Name: "u"})
	for range 2000 {
		resp := get(t, tr, context.Background(), "https://127.0.0.1:6443/healthz")
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
}
