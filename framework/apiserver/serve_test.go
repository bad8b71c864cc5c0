package apiserver_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/converge-dev/converge/framework/apiserver"
	"github.com/converge-dev/converge/framework/certutil/certtest"
)

// serveTLS serves h over TLS with NewHTTPServer and returns its address and
// the pool that trusts it.
func serveTLS(t *testing.T, h http.Handler, opts apiserver.ServingOptions) (string, *x509.CertPool) {
	t.Helper()
	cert, pool := certtest.SelfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	opts.Logger = logr.Discard()
	srv := apiserver.NewHTTPServer(t.Context(), h, opts)
	done := make(chan error, 1)
	go func() { done <- apiserver.Serve(srv, ln) }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String(), pool
}

func TestServeNegotiatesProtocols(t *testing.T) {
	t.Parallel()
	proto := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.Proto) })
	for _, tc := range []struct {
		name         string
		disableHTTP2 bool
		goHTTP2      bool
		clientH2     bool
		want         string
	}{
		{name: "h2 client", clientH2: true, want: "HTTP/2.0"},
		{name: "h2 client, Go's HTTP/2 server", goHTTP2: true, clientH2: true, want: "HTTP/2.0"},
		{name: "http/1.1 client", want: "HTTP/1.1"},
		{name: "h2 disabled", disableHTTP2: true, clientH2: true, want: "HTTP/1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr, pool := serveTLS(t, proto, apiserver.ServingOptions{DisableHTTP2: tc.disableHTTP2, GoHTTP2: tc.goHTTP2})
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: tc.clientH2}
			defer tr.CloseIdleConnections()
			resp, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.Proto != tc.want || string(b) != tc.want {
				t.Fatalf("client saw %s, server saw %s; want %s", resp.Proto, b, tc.want)
			}
		})
	}
}

// h2conn is a raw HTTP/2 client connection for the abuse tests.
type h2conn struct {
	fr  *http2.Framer
	enc *hpack.Encoder
	buf bytes.Buffer
}

func dialH2(t *testing.T, addr string, pool *x509.CertPool) (*h2conn, *tls.Conn) {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	h := &h2conn{fr: http2.NewFramer(c, c)}
	h.enc = hpack.NewEncoder(&h.buf)
	if err := h.fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return h, c
}

// headers is the HPACK block of a GET of path.
func (h *h2conn) headers(path string, extra ...string) []byte {
	h.buf.Reset()
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "127.0.0.1"}, {":path", path}} {
		_ = h.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	for i := 0; i+1 < len(extra); i += 2 {
		_ = h.enc.WriteField(hpack.HeaderField{Name: extra[i], Value: extra[i+1]})
	}
	return bytes.Clone(h.buf.Bytes())
}

// goAway reads frames until a GOAWAY (returned) or the connection ends (nil).
func (h *h2conn) goAway(t *testing.T, c net.Conn) *http2.GoAwayFrame {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			return nil
		}
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			return ga
		}
	}
}

func TestServeAdvertisesLimits(t *testing.T) {
	t.Parallel()
	bothServers(t, testServeAdvertisesLimits)
}

func testServeAdvertisesLimits(t *testing.T, goHTTP2 bool) {
	addr, pool := serveTLS(t, http.NotFoundHandler(), apiserver.ServingOptions{GoHTTP2: goHTTP2})
	h, c := dialH2(t, addr, pool)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	f, err := h.fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok {
		t.Fatalf("first frame %v, want SETTINGS", f)
	}
	want := map[http2.SettingID]uint32{
		http2.SettingMaxConcurrentStreams: apiserver.DefaultMaxStreamsPerConnection,
		http2.SettingMaxFrameSize:         256 << 10,
		http2.SettingInitialWindowSize:    256 << 10,
	}
	for id, v := range want {
		if got, ok := sf.Value(id); !ok || got != v {
			t.Errorf("%v = %d (sent %v), want %d", id, got, ok, v)
		}
	}
	if got, ok := sf.Value(http2.SettingMaxHeaderListSize); !ok || got < 1<<20 || got > 2<<20 {
		t.Errorf("MAX_HEADER_LIST_SIZE = %d (sent %v), want about 1 MiB", got, ok)
	}
}

// TestServeRapidReset opens and resets streams much faster than their
// handlers finish (CVE-2023-44487): no more handlers than the stream limit may
// run, and the server must end the connection with ENHANCE_YOUR_CALM.
func TestServeRapidReset(t *testing.T) {
	t.Parallel()
	bothServers(t, testServeRapidReset)
}

func testServeRapidReset(t *testing.T, goHTTP2 bool) {
	var running, peak atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-release // a handler that ignores the reset
	})
	addr, pool := serveTLS(t, slow, apiserver.ServingOptions{GoHTTP2: goHTTP2, MaxStreamsPerConnection: 10})
	h, c := dialH2(t, addr, pool)
	block := h.headers("/")
	go func() {
		for id := uint32(1); id < 2000; id += 2 {
			if h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndStream: true, EndHeaders: true}) != nil ||
				h.fr.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
				return
			}
		}
	}()
	ga := h.goAway(t, c)
	if ga == nil || ga.ErrCode != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("got %v, want GOAWAY ENHANCE_YOUR_CALM", ga)
	}
	if p := peak.Load(); p > 10 {
		t.Fatalf("%d handlers ran at once, want at most the stream limit 10", p)
	}
}

// TestServeContinuationFlood sends one header block in endless CONTINUATION
// frames (CVE-2023-45288): the server must close the connection once the
// block exceeds the header list limit, not buffer it.
func TestServeContinuationFlood(t *testing.T) {
	t.Parallel()
	bothServers(t, testServeContinuationFlood)
}

func testServeContinuationFlood(t *testing.T, goHTTP2 bool) {
	addr, pool := serveTLS(t, http.NotFoundHandler(), apiserver.ServingOptions{GoHTTP2: goHTTP2})
	h, c := dialH2(t, addr, pool)
	// Each fragment is a whole header field (a literal, never indexed: it is
	// larger than the dynamic table), so the server decodes every byte.
	var fb bytes.Buffer
	_ = hpack.NewEncoder(&fb).WriteField(hpack.HeaderField{Name: "x-filler", Value: string(bytes.Repeat([]byte("a"), 16<<10-32))})
	filler := fb.Bytes()
	sent := make(chan int, 1)
	go func() {
		n := 0
		defer func() { sent <- n }()
		if h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: h.headers("/"), EndStream: true}) != nil {
			return
		}
		for n < 64<<20 {
			if h.fr.WriteContinuation(1, false, filler) != nil {
				return
			}
			n += len(filler)
		}
	}()
	ga := h.goAway(t, c)
	_ = c.Close()
	if ga == nil || ga.ErrCode != http2.ErrCodeProtocol {
		t.Errorf("got %v, want GOAWAY PROTOCOL_ERROR", ga)
	}
	if n := <-sent; n >= 64<<20 {
		t.Fatalf("the server read %d MiB of CONTINUATION frames without closing the connection", n>>20)
	}
}

// TestServeStreamsOverHTTP2 checks that a flushed chunk reaches an HTTP/2
// client before the handler ends, as watches need.
func TestServeStreamsOverHTTP2(t *testing.T) {
	t.Parallel()
	next := make(chan struct{})
	addr, pool := serveTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "first\n")
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush: %v", err)
		}
		select {
		case <-next:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "second\n")
	}), apiserver.ServingOptions{})
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/watch")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("proto %s, want HTTP/2", resp.Proto)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "first\n" {
		t.Fatalf("read %q, %v before the handler went on", buf, err)
	}
	close(next)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "second\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

// bothServers runs test against our HTTP/2 server (h2serve) and Go's.
func bothServers(t *testing.T, test func(t *testing.T, goHTTP2 bool)) {
	t.Run("h2serve", func(t *testing.T) { t.Parallel(); test(t, false) })
	t.Run("go", func(t *testing.T) { t.Parallel(); test(t, true) })
}
