package stream

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/moby/spdystream"

	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// DialFunc connects to a port of the pod.
type DialFunc func(ctx context.Context, port uint16) (net.Conn, error)

// copyBuffer is the size of the port forwarding copy buffers.
const copyBuffer = 128 << 10

// ServePortForward upgrades r to a port forwarding connection (SPDY, or SPDY
// tunnelled in a WebSocket) and forwards each pair of streams the client
// opens to dial(port) until the client closes the connection. pod names the
// pod in error messages.
func ServePortForward(w http.ResponseWriter, r *http.Request, pod string, cfg Config, dial DialFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var c *spdyConn
	switch upgradeOf(r) {
	case transportSPDY:
		client := headerList(r.Header, headerProtocolVersion)
		protocol, ok := pick(client, []string{ProtocolPortForward}, "")
		if !ok {
			w.Header().Set(headerAcceptedProtocols, ProtocolPortForward)
			WriteError(w, errUnsupported(client, []string{ProtocolPortForward}))
			return
		}
		nc, err := upgradeSPDY(w, protocol)
		if err != nil {
			return
		}
		if c, err = newSPDYConn(nc, cfg); err != nil {
			return
		}
	case transportWebSocket:
		ws, _, err := acceptWebSocket(w, r, wsTunnelProtocols, "")
		if err != nil {
			return
		}
		ws.SetReadLimit(-1)
		if c, err = newSPDYConn(websocketNetConn(ctx, ws), cfg); err != nil {
			return
		}
	default:
		WriteError(w, apierrors.NewBadRequest("Upgrade request required"))
		return
	}
	defer c.Close()
	(&forwarder{pod: pod, dial: dial, timeout: cfg.streamTimeout(), pairs: map[string]*streamPair{}}).run(ctx, c)
}

// streamPair is one forwarded connection's streams.
type streamPair struct {
	data, err *spdystream.Stream
	created   time.Time
}

type forwarder struct {
	pod     string
	dial    DialFunc
	timeout time.Duration
	pairs   map[string]*streamPair // by request ID; used by run only
}

// run pairs the client's streams and forwards each complete pair until the
// connection ends.
func (f *forwarder) run(ctx context.Context, c *spdyConn) {
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the forwards (before the wait above)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case s, ok := <-c.streams:
			if !ok {
				return
			}
			p, key := f.add(s)
			if p == nil || p.data == nil || p.err == nil {
				continue
			}
			delete(f.pairs, key)
			wg.Add(1)
			go func() {
				defer wg.Done()
				f.forward(ctx, p)
			}()
		case now := <-tick.C:
			for key, p := range f.pairs {
				if now.Sub(p.created) > f.timeout {
					delete(f.pairs, key)
					for _, s := range []*spdystream.Stream{p.data, p.err} {
						if s != nil {
							_ = s.Reset()
						}
					}
				}
			}
		case <-c.conn.CloseChan(): // the client's side ended
			return
		case <-ctx.Done():
			return
		}
	}
}

// add files s under its request ID (older clients send none: a data stream's
// ID is then its error stream's plus 2).
func (f *forwarder) add(s *spdystream.Stream) (*streamPair, string) {
	typ := s.Headers().Get(headerStreamType)
	key := s.Headers().Get(headerRequestID)
	if key == "" {
		id := s.Identifier()
		if typ == streamData {
			id -= 2
		}
		key = "stream-" + strconv.FormatUint(uint64(id), 10)
	}
	p := f.pairs[key]
	if p == nil {
		p = &streamPair{created: time.Now()}
		f.pairs[key] = p
	}
	switch {
	case typ == streamData && p.data == nil:
		p.data = s
	case typ == streamError && p.err == nil:
		p.err = s
	default:
		_ = s.Reset()
		return nil, key
	}
	return p, key
}

// forward connects p to its port. At the end both streams are reset, so
// that data the client still sends is dropped instead of holding up the
// connection's frame handling.
func (f *forwarder) forward(ctx context.Context, p *streamPair) {
	defer func() {
		_ = p.data.Close()
		_ = p.err.Close()
		_ = p.data.Reset()
		_ = p.err.Reset()
	}()
	portText := p.data.Headers().Get(headerPort)
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		fmt.Fprintf(p.err, "invalid port %q for pod %s", portText, f.pod)
		return
	}
	conn, err := f.dial(ctx, uint16(port))
	if err != nil {
		fmt.Fprintf(p.err, "error forwarding port %d to pod %s: %v", port, f.pod, err)
		return
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() }) // the client went away
	defer stop()
	up := make(chan struct{})
	go func() {
		defer close(up)
		buf := make([]byte, copyBuffer)
		_, _ = io.CopyBuffer(conn, p.data, buf)
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			_ = conn.Close()
		}
	}()
	buf := make([]byte, copyBuffer)
	_, _ = io.CopyBuffer(p.data, conn, buf)
	_ = p.data.Close() // the pod's side finished: half-close towards the client
	_ = p.err.Close()
	select { // the client's side finishes too, or the connection ends
	case <-up:
	case <-ctx.Done():
	}
}
