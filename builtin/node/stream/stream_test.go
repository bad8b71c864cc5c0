package stream_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/moby/spdystream"
	"go.uber.org/goleak"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/stream"
	"github.com/converge-dev/converge/framework/api"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// server serves exec with run, and port forwarding with dial, at /exec and
// /portforward.
func server(t *testing.T, cfg stream.Config, run stream.RunFunc, dial stream.DialFunc) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/exec", func(w http.ResponseWriter, r *http.Request) {
		o, err := stream.ParseOptions(r.URL.Query(), true)
		if err != nil {
			stream.WriteError(w, err)
			return
		}
		stream.ServeRemoteCommand(w, r, o, cfg, run)
	})
	mux.HandleFunc("/portforward", func(w http.ResponseWriter, r *http.Request) {
		stream.ServePortForward(w, r, "ns/pod", cfg, dial)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// echo copies stdin to stdout, writes the terminal sizes it gets, and exits 3.
func echo(ctx context.Context, s cri.Streams) (int, error) {
	if s.Resize != nil {
		size := <-s.Resize
		fmt.Fprintf(s.Stdout, "size %dx%d\n", size.Width, size.Height)
	}
	if s.Stdin != nil {
		_, _ = io.Copy(s.Stdout, s.Stdin)
	}
	return 3, nil
}

// upgradeSPDY sends a SPDY upgrade request and returns the client connection
// (nil and the answer when the server did not switch protocols).
func upgradeSPDY(t *testing.T, srv *httptest.Server, path string, protocols ...string) (*spdystream.Connection, *http.Response) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+path, nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "SPDY/3.1")
	for _, p := range protocols {
		req.Header.Add("X-Stream-Protocol-Version", p)
	}
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		conn.Close()
		return nil, resp
	}
	if br.Buffered() > 0 {
		t.Fatal("data before the SPDY session")
	}
	c, err := spdystream.NewConnection(conn, false)
	if err != nil {
		t.Fatal(err)
	}
	go c.Serve(spdystream.NoOpStreamHandler)
	t.Cleanup(func() { closeSPDY(c, conn) })
	return c, resp
}

func closeSPDY(c *spdystream.Connection, conn net.Conn) {
	_ = c.Close()
	_ = c.Wait(time.Second)
	conn.Close()
}

func spdyStream(t *testing.T, c *spdystream.Connection, kv ...string) *spdystream.Stream {
	t.Helper()
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	s, err := c.CreateStream(h, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WaitTimeout(5 * time.Second); err != nil {
		t.Fatalf("stream %v not accepted: %v", kv, err)
	}
	return s
}

func decodeStatus(t *testing.T, b []byte) api.Status {
	t.Helper()
	var st api.Status
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("decode Status %q: %v", b, err)
	}
	return st
}

func wantExitCode(t *testing.T, b []byte, code string) {
	t.Helper()
	st := decodeStatus(t, b)
	if st.Status != api.StatusFailure || st.Reason != "NonZeroExitCode" || st.Details == nil ||
		len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != "ExitCode" || st.Details.Causes[0].Message != code {
		t.Errorf("error stream = %s, want NonZeroExitCode with cause ExitCode %s", b, code)
	}
}

func TestSPDYExec(t *testing.T) {
	srv := server(t, stream.Config{}, echo, nil)
	c, resp := upgradeSPDY(t, srv, "/exec?command=x&stdin=true&stdout=true", "v5.channel.k8s.io", "v4.channel.k8s.io", "v3.channel.k8s.io")
	if c == nil {
		t.Fatalf("no upgrade: %s", resp.Status)
	}
	if got := resp.Header.Get("X-Stream-Protocol-Version"); got != "v4.channel.k8s.io" {
		t.Errorf("protocol = %q, want v4.channel.k8s.io", got)
	}
	errS := spdyStream(t, c, "streamType", "error")
	stdin := spdyStream(t, c, "streamType", "stdin")
	stdout := spdyStream(t, c, "streamType", "stdout")
	if _, err := stdin.Write([]byte("over spdy")); err != nil {
		t.Fatal(err)
	}
	_ = stdin.Close()
	out, _ := io.ReadAll(stdout)
	if string(out) != "over spdy" {
		t.Errorf("stdout = %q", out)
	}
	res, _ := io.ReadAll(errS)
	wantExitCode(t, res, "3")
}

func TestSPDYNegotiationAndMissingStreams(t *testing.T) {
	ran := make(chan struct{}, 1)
	srv := server(t, stream.Config{StreamCreationTimeout: 200 * time.Millisecond}, func(context.Context, cri.Streams) (int, error) {
		ran <- struct{}{}
		return 0, nil
	}, nil)
	_, resp := upgradeSPDY(t, srv, "/exec?command=x&stdout=1", "v9.channel.k8s.io")
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "unable to negotiate protocol") ||
		!strings.Contains(resp.Header.Get("X-Accepted-Stream-Protocol-Versions"), "v4.channel.k8s.io") {
		t.Errorf("unsupported protocol: %s %q", resp.Status, b)
	}

	resp, err := http.Get(srv.URL + "/exec?command=x&stdout=1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "Upgrade request required") {
		t.Errorf("plain GET: %s %q", resp.Status, b)
	}

	resp, err = http.Get(srv.URL + "/exec?command=x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "at least 1 of stdin, stdout, stderr") {
		t.Errorf("no stream: %s %q", resp.Status, b)
	}

	// The stdout stream never comes: the server gives up, nothing runs.
	c, _ := upgradeSPDY(t, srv, "/exec?command=x&stdout=1", "v4.channel.k8s.io")
	errS := spdyStream(t, c, "streamType", "error")
	done := make(chan struct{})
	go func() { _, _ = io.ReadAll(errS); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the connection hangs without its streams")
	}
	select {
	case <-ran:
		t.Error("the command ran without its streams")
	default:
	}
}

func TestSPDYClientGoneEndsCommand(t *testing.T) {
	ended := make(chan struct{})
	srv := server(t, stream.Config{}, func(ctx context.Context, s cri.Streams) (int, error) {
		<-ctx.Done()
		close(ended)
		return 0, nil
	}, nil)
	c, _ := upgradeSPDY(t, srv, "/exec?command=x&stdout=1", "v4.channel.k8s.io")
	spdyStream(t, c, "streamType", "error")
	spdyStream(t, c, "streamType", "stdout")
	time.Sleep(100 * time.Millisecond)
	_ = c.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the command outlived its client")
	}
}

func wsURL(srv *httptest.Server, path string) string {
	return "ws" + strings.TrimPrefix(srv.URL, "http") + path
}

func TestWebSocketExec(t *testing.T) {
	srv := server(t, stream.Config{}, echo, nil)
	for _, protocol := range []string{"v5.channel.k8s.io", "v4.channel.k8s.io"} {
		t.Run(protocol, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			c, _, err := websocket.Dial(ctx, wsURL(srv, "/exec?command=x&stdin=1&stdout=1&tty=1"),
				&websocket.DialOptions{Subprotocols: []string{protocol}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			if c.Subprotocol() != protocol {
				t.Fatalf("subprotocol = %q", c.Subprotocol())
			}
			send := func(b ...byte) {
				if err := c.Write(ctx, websocket.MessageBinary, b); err != nil {
					t.Fatal(err)
				}
			}
			send(append([]byte{4}, `{"Width":120,"Height":40}`...)...)
			send(append([]byte{0}, "typed"...)...)
			if protocol == "v5.channel.k8s.io" {
				send(255, 0) // close stdin
			} else {
				go func() { time.Sleep(200 * time.Millisecond); _ = c.Close(websocket.StatusNormalClosure, "") }()
			}
			var stdout strings.Builder
			var result []byte
			for {
				_, msg, err := c.Read(ctx)
				if err != nil {
					if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
						t.Fatalf("read: %v", err)
					}
					break
				}
				switch msg[0] {
				case 1:
					stdout.Write(msg[1:])
				case 3:
					result = append(result, msg[1:]...)
				}
			}
			if stdout.String() != "size 120x40\ntyped" {
				t.Errorf("stdout = %q", stdout.String())
			}
			if protocol == "v5.channel.k8s.io" {
				wantExitCode(t, result, "3")
			}
		})
	}
}

func TestWebSocketUnsupportedProtocol(t *testing.T) {
	srv := server(t, stream.Config{}, echo, nil)
	_, resp, err := websocket.Dial(t.Context(), wsURL(srv, "/exec?command=x&stdout=1"),
		&websocket.DialOptions{Subprotocols: []string{"v9.channel.k8s.io"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("dial = %v, %+v; want a 400", err, resp)
	}
}

// echoServer accepts TCP connections and echoes them.
func echoServer(t *testing.T) *net.TCPAddr {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().(*net.TCPAddr)
}

func dialLocal(ctx context.Context, port uint16) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
}

// forwardOnce sends msg through one forwarded connection to port and returns
// the answer and the error stream's text.
func forwardOnce(t *testing.T, c *spdystream.Connection, id string, port int, msg string) (string, string) {
	t.Helper()
	errS := spdyStream(t, c, "streamType", "error", "port", fmt.Sprint(port), "requestID", id)
	_ = errS.Close()
	data := spdyStream(t, c, "streamType", "data", "port", fmt.Sprint(port), "requestID", id)
	if _, err := data.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	_ = data.Close() // half-close: the echo server answers, then ends
	got, _ := io.ReadAll(data)
	errText, _ := io.ReadAll(errS)
	_ = data.Reset()
	_ = errS.Reset()
	return string(got), string(errText)
}

func TestPortForward(t *testing.T) {
	addr := echoServer(t)
	closed := func() int {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		defer ln.Close()
		return ln.Addr().(*net.TCPAddr).Port
	}()
	srv := server(t, stream.Config{}, nil, dialLocal)
	check := func(t *testing.T, c *spdystream.Connection) {
		for i := range 3 {
			got, errText := forwardOnce(t, c, fmt.Sprint(i), addr.Port, fmt.Sprintf("hello %d", i))
			if got != fmt.Sprintf("hello %d", i) || errText != "" {
				t.Errorf("forward %d = %q, error %q", i, got, errText)
			}
		}
		got, errText := forwardOnce(t, c, "closed", closed, "anyone?")
		if got != "" || !strings.Contains(errText, fmt.Sprintf("error forwarding port %d to pod ns/pod", closed)) {
			t.Errorf("closed port = %q, error %q", got, errText)
		}
	}
	t.Run("SPDY", func(t *testing.T) {
		_, resp := upgradeSPDY(t, srv, "/portforward", "v4.channel.k8s.io")
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("exec protocol on port-forward: %s", resp.Status)
		}
		c, _ := upgradeSPDY(t, srv, "/portforward", "portforward.k8s.io")
		check(t, c)
	})
	t.Run("SPDY over WebSocket", func(t *testing.T) {
		ws, _, err := websocket.Dial(t.Context(), wsURL(srv, "/portforward?ports=80"),
			&websocket.DialOptions{Subprotocols: []string{"SPDY/3.1+portforward.k8s.io"}})
		if err != nil {
			t.Fatal(err)
		}
		ws.SetReadLimit(-1)
		nc := websocket.NetConn(t.Context(), ws, websocket.MessageBinary)
		c, err := spdystream.NewConnection(nc, false)
		if err != nil {
			t.Fatal(err)
		}
		go c.Serve(spdystream.NoOpStreamHandler)
		defer closeSPDY(c, nc)
		check(t, c)
	})
}

func TestSPDYIdleTimeout(t *testing.T) {
	srv := server(t, stream.Config{IdleTimeout: 200 * time.Millisecond}, nil, dialLocal)
	c, _ := upgradeSPDY(t, srv, "/portforward", "portforward.k8s.io")
	select {
	case <-c.CloseChan():
	case <-time.After(5 * time.Second):
		t.Fatal("an idle connection stays open")
	}
}
