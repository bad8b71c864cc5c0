package h2serve_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/converge-dev/converge/framework/apiserver/h2serve"
)

// echo answers with the request body, or with n bytes when ?n=N is given.
func echo() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := r.URL.Query().Get("n"); n != "" {
			var size int
			fmt.Sscan(n, &size)
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(pattern(size))
			return
		}
		w.Header().Set("X-Proto", r.Proto)
		_, _ = io.Copy(w, r.Body)
	})
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

func TestConcurrentStreams(t *testing.T) {
	s := serve(t, echo(), false, h2serve.Config{})
	hc := s.client()
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Go(func() {
			body := fmt.Sprintf("request %d %s", i, strings.Repeat("x", i*10))
			resp, err := hc.Post(s.url("/echo"), "text/plain", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if err != nil || string(got) != body || resp.ProtoMajor != 2 || resp.Header.Get("X-Proto") != "HTTP/2.0" {
				t.Errorf("request %d: %v %q proto %s", i, err, got, resp.Proto)
			}
		})
	}
	wg.Wait()
}

// TestLargeBodies sends and receives bodies many times the stream and
// connection windows: flow control both ways.
func TestLargeBodies(t *testing.T) {
	s := serve(t, echo(), false, h2serve.Config{StreamWindow: 64 << 10, ConnWindow: 100 << 10})
	hc := s.client()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			up := pattern(3<<20 + i)
			resp, err := hc.Post(s.url("/echo"), "application/octet-stream", bytes.NewReader(up))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if err != nil || sha256.Sum256(got) != sha256.Sum256(up) {
				t.Errorf("echo of %d bytes: %v, got %d bytes", len(up), err, len(got))
			}
			resp2, err := hc.Get(s.url(fmt.Sprintf("/?n=%d", 5<<20)))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp2.Body.Close()
			got, err = io.ReadAll(resp2.Body)
			if err != nil || !bytes.Equal(got, pattern(5<<20)) {
				t.Errorf("download: %v, %d bytes, content-length %d", err, len(got), resp2.ContentLength)
			}
		})
	}
	wg.Wait()
}

// TestResponseHeaders checks what the writer adds: content-length of a
// response sent whole, a sniffed Content-Type, Date.
func TestResponseHeaders(t *testing.T) {
	s := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/nocontent" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		_, _ = io.WriteString(w, "<html><body>hi</body></html>")
	}), false, h2serve.Config{})
	hc := s.client()
	resp, err := hc.Get(s.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ContentLength != int64(len(body)) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || resp.Header.Get("Date") == "" {
		t.Errorf("headers %v, content-length %d", resp.Header, resp.ContentLength)
	}
	resp, err = hc.Get(s.url("/nocontent"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("status %d", resp.StatusCode)
	}
}

// TestStreamingFlush is a watch: flushed events reach the client while the
// handler runs, through http.ResponseController too.
func TestStreamingFlush(t *testing.T) {
	release := make(chan struct{})
	s := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		for i := range 3 {
			fmt.Fprintf(w, "event %d\n", i)
			if err := rc.Flush(); err != nil {
				t.Errorf("flush: %v", err)
			}
		}
		<-release
		fmt.Fprintf(w, "last\n")
	}), false, h2serve.Config{})
	resp, err := s.client().Get(s.url("/watch"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for i := range 3 {
		line, err := br.ReadString('\n')
		if err != nil || line != fmt.Sprintf("event %d\n", i) {
			t.Fatalf("line %d: %q %v", i, line, err)
		}
	}
	close(release)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "last\n" {
		t.Errorf("rest %q %v", rest, err)
	}
}

// TestClientCancel: a request the client cancels (RST_STREAM) cancels the
// handler's context.
func TestClientCancel(t *testing.T) {
	canceled := make(chan error, 1)
	started := make(chan struct{})
	s := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		close(started)
		select {
		case <-r.Context().Done():
			canceled <- r.Context().Err()
		case <-time.After(10 * time.Second):
			canceled <- errors.New("not canceled")
		}
	}), false, h2serve.Config{})
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url("/"), nil)
	resp, err := s.client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	cancel()
	resp.Body.Close()
	if err := <-canceled; !errors.Is(err, context.Canceled) {
		t.Errorf("handler context: %v", err)
	}
}

// TestShutdown: GOAWAY, running requests finish, then connections close.
func TestShutdown(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	s := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			started <- struct{}{}
			<-release
		}
		_, _ = io.WriteString(w, "done")
	}), false, h2serve.Config{})
	hc := s.client()
	if resp, err := hc.Get(s.url("/")); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	result := make(chan string, 1)
	go func() {
		resp, err := hc.Get(s.url("/slow"))
		if err != nil {
			result <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		result <- string(b)
	}()
	<-started
	shut := make(chan error, 1)
	go func() { shut <- s.srv.Shutdown(context.Background()) }()
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned before the request finished: %v", err)
	default:
	}
	close(release)
	if got := <-result; got != "done" {
		t.Errorf("in-flight request: %q", got)
	}
	select {
	case err := <-shut:
		if err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not return")
	}
}

// TestPanic: a panicking handler resets its stream (INTERNAL_ERROR); the
// connection goes on.
func TestPanic(t *testing.T) {
	s := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/abort" {
			panic(http.ErrAbortHandler)
		}
		_, _ = io.WriteString(w, "ok")
	}), false, h2serve.Config{})
	hc := s.client()
	if _, err := hc.Get(s.url("/abort")); err == nil || !strings.Contains(err.Error(), "INTERNAL_ERROR") {
		t.Errorf("aborted request: %v", err)
	}
	resp, err := hc.Get(s.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestSmallPeerFrames: a client with 16 KiB frames and a small header table
// gets responses split to its frame size (x/net's transport rejects larger).
func TestSmallPeerFrames(t *testing.T) {
	s := serve(t, echo(), false, h2serve.Config{})
	tr := &http2.Transport{TLSClientConfig: &tls.Config{RootCAs: s.pool}, MaxReadFrameSize: 16 << 10, MaxDecoderHeaderTableSize: 256}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	for range 3 {
		resp, err := hc.Get(s.url("/?n=200000"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Equal(got, pattern(200000)) {
			t.Fatalf("%v, %d bytes", err, len(got))
		}
	}
}

// TestCurl uses curl (nghttp2) as an independent client.
func TestCurl(t *testing.T) {
	s := serve(t, echo(), false, h2serve.Config{})
	out, err := exec.Command("curl", "--http2", "-sS", "-k", "-d", "hello curl", "-w", " %{http_version}", s.url("/echo")).CombinedOutput()
	if err != nil || string(out) != "hello curl 2" {
		t.Fatalf("curl: %v: %q", err, out)
	}
	out, err = exec.Command("curl", "--http2", "-sS", "-k", "-o", "/dev/null", "-w", "%{http_version} %{size_download}", s.url("/?n=3000000")).CombinedOutput()
	if err != nil || string(out) != "2 3000000" {
		t.Fatalf("curl download: %v: %q", err, out)
	}
}
