package h2serve_test

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/converge-dev/converge/framework/apiserver/h2serve"
)

// rawClient is an HTTP/2 connection driven frame by frame.
type rawClient struct {
	conn *tls.Conn
	fr   *http2.Framer
	enc  *hpack.Encoder
	hbuf bytes.Buffer
}

func dialRaw(t *testing.T, s *testServer, settings ...http2.Setting) *rawClient {
	t.Helper()
	conn, err := tls.Dial("tcp", s.addr, &tls.Config{RootCAs: s.pool, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	c := &rawClient{conn: conn, fr: http2.NewFramer(conn, conn)}
	c.enc = hpack.NewEncoder(&c.hbuf)
	if err := c.fr.WriteSettings(settings...); err != nil {
		t.Fatal(err)
	}
	return c
}

// headers is the header block of a GET of path.
func (c *rawClient) headers(path string) []byte {
	c.hbuf.Reset()
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "localhost"}, {":path", path}} {
		_ = c.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	return bytes.Clone(c.hbuf.Bytes())
}

// untilGoAway reads frames until GOAWAY or the end of the connection and
// returns the GOAWAY's code (-1: none).
func (c *rawClient) untilGoAway(t *testing.T, within time.Duration) http2.ErrCode {
	t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(within))
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			var ne interface{ Timeout() bool }
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("connection still open after %v", within)
			}
			return ^http2.ErrCode(0)
		}
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			return ga.ErrCode
		}
	}
}

// TestRapidReset: a client that opens streams and resets them at once
// (CVE-2023-44487) gets at most MaxConcurrentStreams handlers running and
// its connection closed with ENHANCE_YOUR_CALM.
func TestRapidReset(t *testing.T) {
	var running, peak atomic.Int64
	release := make(chan struct{})
	s := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-release // handlers of reset streams keep running
		running.Add(-1)
	}), false, h2serve.Config{MaxConcurrentStreams: 10})
	defer close(release)
	c := dialRaw(t, s)
	go func() {
		for id := uint32(1); id < 2000; id += 2 {
			if c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.headers("/"), EndStream: true, EndHeaders: true}) != nil ||
				c.fr.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
				return
			}
		}
	}()
	if code := c.untilGoAway(t, 10*time.Second); code != http2.ErrCodeEnhanceYourCalm {
		t.Errorf("GOAWAY code %v, want ENHANCE_YOUR_CALM", code)
	}
	if p := peak.Load(); p > 10 {
		t.Errorf("%d handlers ran at once, want at most 10", p)
	}
}

// TestContinuationFlood: HEADERS followed by endless CONTINUATION frames
// (CVE-2023-45288) close the connection once the header list exceeds its
// limit, without the server decoding or keeping the rest.
func TestContinuationFlood(t *testing.T) {
	s := serve(t, http.NotFoundHandler(), false, h2serve.Config{MaxHeaderListSize: 64 << 10})
	c := dialRaw(t, s)
	var sent atomic.Int64
	go func() {
		if c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: c.headers("/")}) != nil {
			return
		}
		for range 4096 { // 64 MiB if nothing stops it
			c.hbuf.Reset()
			_ = c.enc.WriteField(hpack.HeaderField{Name: "x-flood", Value: strings.Repeat("a", 16000)})
			if c.fr.WriteContinuation(1, false, c.hbuf.Bytes()) != nil {
				return
			}
			sent.Add(int64(c.hbuf.Len()))
		}
	}()
	code := c.untilGoAway(t, 10*time.Second)
	if code != http2.ErrCodeProtocol && code != ^http2.ErrCode(0) {
		t.Errorf("GOAWAY code %v", code)
	}
	if n := sent.Load(); n > 16<<20 {
		t.Errorf("the server read %d bytes of header block before closing", n)
	}
}

// TestHeaderListTooLarge: a request whose header list exceeds
// MaxHeaderListSize (in fields each within it) is answered 431 without its
// handler, and the connection goes on serving. (FuzzConn found this path
// dereferencing the request it has not got, which crashed the process.)
func TestHeaderListTooLarge(t *testing.T) {
	s := serve(t, echo(), false, h2serve.Config{MaxHeaderListSize: 4 << 10})
	c := dialRaw(t, s)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	block := c.headers("/")
	c.hbuf.Reset()
	for i := range 100 {
		_ = c.enc.WriteField(hpack.HeaderField{Name: fmt.Sprintf("x-field-%d", i), Value: strings.Repeat("a", 100)})
	}
	block = append(block, c.hbuf.Bytes()...)
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: c.headers("/?n=5"), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	status := map[uint32]string{}
	for len(status) < 2 {
		f, err := c.fr.ReadFrame()
		if err != nil {
			t.Fatalf("after statuses %v: %v", status, err)
		}
		if h, ok := f.(*http2.MetaHeadersFrame); ok {
			status[h.StreamID] = h.PseudoValue("status")
		}
	}
	if status[1] != "431" || status[3] != "200" {
		t.Errorf("statuses %v, want 431 for the large header list and 200 for the next request", status)
	}
}

// TestPingFlood: a client that sends PINGs without reading the answers has
// its connection closed (after WriteTimeout), not answered into an
// unbounded buffer.
func TestPingFlood(t *testing.T) {
	s := serve(t, http.NotFoundHandler(), false, h2serve.Config{WriteTimeout: 300 * time.Millisecond})
	c := dialRaw(t, s)
	done := make(chan int)
	go func() {
		n := 0
		for ; n < 10_000_000; n++ {
			if c.fr.WritePing(false, [8]byte{1}) != nil {
				break
			}
		}
		done <- n
	}()
	select {
	case n := <-done:
		t.Logf("server closed the connection after %d pings", n)
	case <-time.After(20 * time.Second):
		t.Fatal("the server still reads pings that it cannot answer")
	}
}

// TestPeerWindowSettings: a client with a zero initial window gets no DATA
// until it raises INITIAL_WINDOW_SIZE (applied to the open stream) and then
// WINDOW_UPDATEs; the response arrives whole.
func TestPeerWindowSettings(t *testing.T) {
	s := serve(t, echo(), false, h2serve.Config{})
	c := dialRaw(t, s, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: c.headers("/?n=100000"), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	got, ended := 0, false
	read := func(until time.Time) {
		_ = c.conn.SetReadDeadline(until)
		for !ended {
			f, err := c.fr.ReadFrame()
			if err != nil {
				return
			}
			if d, ok := f.(*http2.DataFrame); ok {
				got += len(d.Data())
				ended = d.StreamEnded()
			}
		}
	}
	read(time.Now().Add(300 * time.Millisecond))
	if got != 0 {
		t.Fatalf("%d bytes of DATA sent into a zero window", got)
	}
	if err := c.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 30000}); err != nil {
		t.Fatal(err)
	}
	read(time.Now().Add(300 * time.Millisecond))
	if got != 30000 {
		t.Fatalf("got %d bytes after raising the window to 30000", got)
	}
	_ = c.fr.WriteWindowUpdate(1, 100000)
	_ = c.fr.WriteWindowUpdate(0, 100000)
	read(time.Now().Add(5 * time.Second))
	if got != 100000 || !ended {
		t.Fatalf("got %d bytes, ended %v", got, ended)
	}
}
