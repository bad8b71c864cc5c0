package stream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/moby/spdystream"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/framework/api"
)

// spdyConn is a server SPDY connection whose new streams arrive on streams
// (closed when the connection ends).
type spdyConn struct {
	net     net.Conn
	conn    *spdystream.Connection
	streams chan *spdystream.Stream
	done    chan struct{} // closed when the connection ended

	mu   sync.Mutex
	seen []*spdystream.Stream // every stream, reset at close; guarded by mu
}

// upgradeSPDY answers r with 101 Switching Protocols for protocol and
// returns the hijacked connection.
func upgradeSPDY(w http.ResponseWriter, protocol string) (net.Conn, error) {
	w.Header().Set("Connection", "Upgrade")
	w.Header().Set("Upgrade", spdyUpgrade)
	w.Header().Set(headerProtocolVersion, protocol)
	w.WriteHeader(http.StatusSwitchingProtocols)
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, fmt.Errorf("hijack connection: %w", err)
	}
	if brw.Reader.Buffered() > 0 {
		return &bufferedConn{Conn: conn, r: brw.Reader}, nil
	}
	return conn, nil
}

// bufferedConn reads what the HTTP server buffered before the connection.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// newSPDYConn serves SPDY on nc.
func newSPDYConn(nc net.Conn, cfg Config) (*spdyConn, error) {
	conn, err := spdystream.NewConnection(&frameConn{Conn: nc}, true)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("start spdy connection: %w", err)
	}
	conn.SetIdleTimeout(cfg.idleTimeout())
	c := &spdyConn{net: nc, conn: conn, streams: make(chan *spdystream.Stream, 64), done: make(chan struct{})}
	go func() {
		conn.Serve(c.accept)
		close(c.streams) // Serve returns after its handlers did
		close(c.done)
	}()
	return c, nil
}

// accept is spdystream's handler for a new stream: it must not block.
func (c *spdyConn) accept(s *spdystream.Stream) {
	c.mu.Lock()
	c.seen = append(c.seen, s)
	c.mu.Unlock()
	select {
	case c.streams <- s:
		_ = s.SendReply(http.Header{}, false)
	default:
		_ = s.Refuse()
	}
}

// Close resets every stream and closes the connection: a GOAWAY, then the
// network connection once no stream is left (at once, all being reset).
func (c *spdyConn) Close() {
	c.mu.Lock()
	seen := c.seen
	c.seen = nil
	c.mu.Unlock()
	for _, s := range seen {
		_ = s.Reset()
	}
	_ = c.conn.Close()
	_ = c.conn.Wait(time.Second) // collects spdystream's shutdown result
	_ = c.net.Close()
	select {
	case <-c.done:
	case <-time.After(time.Second):
	}
}

// spdySession upgrades r and waits for the client's streams.
func spdySession(ctx context.Context, cancel context.CancelFunc, w http.ResponseWriter, r *http.Request, o Options, cfg Config) (*session, error) {
	client := headerList(r.Header, headerProtocolVersion)
	protocol, ok := pick(client, spdyExecProtocols, ProtocolV1)
	if !ok {
		w.Header().Set(headerAcceptedProtocols, strings.Join(spdyExecProtocols, ", "))
		WriteError(w, errUnsupported(client, spdyExecProtocols))
		return nil, errAnswered
	}
	nc, err := upgradeSPDY(w, protocol)
	if err != nil {
		return nil, err
	}
	c, err := newSPDYConn(nc, cfg)
	if err != nil {
		return nil, err
	}
	go func() {
		<-c.done
		cancel() // the client went away
	}()
	want := map[string]bool{streamError: true, streamStdin: o.Stdin, streamStdout: o.Stdout, streamStderr: o.Stderr,
		streamResize: o.TTY && protocol != ProtocolV1 && protocol != ProtocolV2}
	n := 0
	for _, v := range want {
		if v {
			n++
		}
	}
	got := map[string]*spdystream.Stream{}
	timeout := time.NewTimer(cfg.streamTimeout())
	defer timeout.Stop()
	for len(got) < n {
		select {
		case s, ok := <-c.streams:
			if !ok {
				c.Close()
				return nil, errAnswered
			}
			typ := s.Headers().Get(headerStreamType)
			if !want[typ] || got[typ] != nil {
				_ = s.Reset()
				continue
			}
			got[typ] = s
		case <-timeout.C:
			c.Close()
			return nil, errAnswered
		case <-ctx.Done():
			c.Close()
			return nil, errAnswered
		}
	}
	errStream := got[streamError]
	sess := &session{
		protocol: protocol,
		result: func(st api.Status) error {
			if b := encodeResult(protocol, st); len(b) > 0 {
				if _, err := errStream.Write(b); err != nil {
					return err
				}
			}
			return errStream.Close()
		},
	}
	sess.streams.TTY = o.TTY
	if s := got[streamStdin]; s != nil {
		sess.streams.Stdin = s
	}
	if s := got[streamStdout]; s != nil {
		sess.streams.Stdout = s
	}
	if s := got[streamStderr]; s != nil {
		sess.streams.Stderr = s
	}
	if s := got[streamResize]; s != nil {
		ch := make(chan cri.TermSize, 1)
		go decodeResizes(s, ch)
		sess.streams.Resize = ch
	}
	sess.close = func() {
		for _, typ := range []string{streamStdout, streamStderr} {
			if s := got[typ]; s != nil {
				_ = s.Close()
			}
		}
		c.Close()
	}
	return sess, nil
}

// errAnswered: the request was answered (or the connection torn down) already.
var errAnswered = errors.New("stream: answered")
