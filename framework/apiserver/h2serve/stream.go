package h2serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/net/http2"
)

// stream is one request and its response. Its fields are under c.mu, except
// those only its handler uses (set before the handler starts).
type stream struct {
	c    *conn
	id   uint32
	cond sync.Cond // body data, send window, reset

	req      *http.Request
	cancel   context.CancelFunc
	tooLarge bool // header list truncated: answered 431

	inMap        bool
	remoteClosed bool // END_STREAM received (or reset)
	localClosed  bool // END_STREAM sent (or reset)
	handlerDone  bool
	resetErr     error

	sendWindow int64
	recvWindow int64
	unacked    int64 // body bytes read, not yet returned to the peer

	rbuf     []byte
	roff     int
	rEOF     bool
	declLen  int64 // content-length, -1 when not given
	received int64
}

// Connection-specific header fields an HTTP/2 message must not carry
// (RFC 9113 §8.2.2).
func connectionSpecific(name string) bool {
	switch name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		return true
	}
	return false
}

func (c *conn) processHeaders(f *http2.MetaHeadersFrame) error {
	id := f.StreamID
	if id%2 == 0 {
		return connError{http2.ErrCodeProtocol, "even stream id"}
	}
	c.mu.Lock()
	if st := c.streams[id]; st != nil {
		// Trailers: they must end the stream.
		if st.remoteClosed {
			c.closeStreamLocked(st, errStreamReset)
			c.resetLocked(id, http2.ErrCodeStreamClosed)
			err := c.flushErr()
			c.mu.Unlock()
			return err
		}
		if !f.StreamEnded() || len(f.PseudoFields()) > 0 {
			c.mu.Unlock()
			if !f.StreamEnded() {
				return connError{http2.ErrCodeProtocol, "trailers without END_STREAM"}
			}
			return c.streamError(id, http2.ErrCodeProtocol)
		}
		if st.declLen >= 0 && st.received != st.declLen {
			c.mu.Unlock()
			return c.streamError(id, http2.ErrCodeProtocol)
		}
		st.rEOF = true
		c.remoteEndLocked(st)
		st.cond.Broadcast()
		c.mu.Unlock()
		return nil
	}
	if id <= c.maxStreamID {
		c.mu.Unlock()
		if c.recentlyReset(id) {
			return c.streamError(id, http2.ErrCodeStreamClosed)
		}
		return connError{http2.ErrCodeProtocol, "HEADERS on a closed stream"}
	}
	c.maxStreamID = id
	if c.goingAway {
		c.mu.Unlock()
		return nil
	}
	if f.HasPriority() && f.Priority.StreamDep == id {
		c.mu.Unlock()
		return c.streamError(id, http2.ErrCodeProtocol)
	}
	if uint32(len(c.streams)) >= c.cfg.MaxConcurrentStreams {
		c.resetLocked(id, http2.ErrCodeRefusedStream)
		err := c.flushErr()
		c.mu.Unlock()
		return err
	}
	c.mu.Unlock()

	st := &stream{c: c, id: id, declLen: -1, recvWindow: int64(c.cfg.StreamWindow)}
	st.cond.L = &c.mu
	if f.Truncated {
		st.tooLarge = true
	} else if err := c.newRequest(st, f); err != nil {
		return c.streamError(id, http2.ErrCodeProtocol)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	st.sendWindow = c.peerInitWindow
	st.inMap = true
	c.streams[id] = st
	if len(c.streams) == 1 && c.idleTimer != nil {
		c.idleTimer.Stop()
	}
	if f.StreamEnded() {
		st.rEOF = true
		st.remoteClosed = true
	}
	if c.running >= int(c.cfg.MaxConcurrentStreams) {
		if len(c.queue) >= maxQueuedPerStream*int(c.cfg.MaxConcurrentStreams) {
			return connError{http2.ErrCodeEnhanceYourCalm, "too many streams wait for a handler (rapid reset)"}
		}
		c.queue = append(c.queue, st)
		return nil
	}
	c.running++
	c.srv.pool.dispatch(st)
	return nil
}

// canonical is the canonical form of a lower-case header name, cached for
// the connection.
func (c *conn) canonical(name string) string {
	if s, ok := c.canon[name]; ok {
		return s
	}
	s := textproto.CanonicalMIMEHeaderKey(name)
	if len(c.canon) < 200 {
		c.canon[name] = s
	}
	return s
}

// newRequest builds st's request from the header block (reader goroutine).
func (c *conn) newRequest(st *stream, f *http2.MetaHeadersFrame) error {
	var method, path, scheme, authority string
	for _, hf := range f.PseudoFields() {
		switch hf.Name {
		case ":method":
			method = hf.Value
		case ":path":
			path = hf.Value
		case ":scheme":
			scheme = hf.Value
		case ":authority":
			authority = hf.Value
		default: // :status, :protocol
			return fmt.Errorf("pseudo-header %s in a request", hf.Name)
		}
	}
	regular := f.RegularFields()
	header := make(http.Header, len(regular))
	var cookies []string
	for _, hf := range regular {
		if connectionSpecific(hf.Name) {
			return fmt.Errorf("connection-specific header %s", hf.Name)
		}
		if hf.Name == "te" && hf.Value != "trailers" {
			return errors.New("te other than trailers")
		}
		if hf.Name == "cookie" {
			cookies = append(cookies, hf.Value)
			continue
		}
		k := c.canonical(hf.Name)
		header[k] = append(header[k], hf.Value)
	}
	if len(cookies) > 0 {
		header["Cookie"] = []string{strings.Join(cookies, "; ")}
	}
	var u *url.URL
	requestURI := path
	if method == "CONNECT" {
		if path != "" || scheme != "" || authority == "" {
			return errors.New("malformed CONNECT")
		}
		u, requestURI = &url.URL{Host: authority}, authority
	} else {
		if method == "" || path == "" || scheme == "" {
			return errors.New("missing pseudo-header")
		}
		if path[0] != '/' && !(method == "OPTIONS" && path == "*") {
			return errors.New("bad :path")
		}
		var err error
		if u, err = url.ParseRequestURI(path); err != nil {
			return err
		}
	}
	host := authority
	if host == "" {
		host = header.Get("Host")
	}
	st.declLen = -1
	contentLength := int64(-1)
	if f.StreamEnded() {
		contentLength = 0
	}
	if cl := header["Content-Length"]; len(cl) > 0 {
		n, err := strconv.ParseInt(cl[0], 10, 64)
		if err != nil || n < 0 || len(cl) > 1 && strings.Join(cl, ",") != strings.Repeat(cl[0]+",", len(cl)-1)+cl[0] {
			return errors.New("bad content-length")
		}
		if f.StreamEnded() && n != 0 {
			return errors.New("content-length of a request without body")
		}
		st.declLen, contentLength = n, n
	}
	r := &http.Request{
		Method:        method,
		URL:           u,
		Proto:         "HTTP/2.0",
		ProtoMajor:    2,
		Header:        header,
		ContentLength: contentLength,
		Host:          host,
		RemoteAddr:    c.remoteAddr,
		RequestURI:    requestURI,
		TLS:           c.tlsState,
	}
	if f.StreamEnded() {
		r.Body = http.NoBody
	} else {
		r.Body = &requestBody{st: st}
	}
	st.req = r
	return nil
}

// runHandlers runs st's handler, then those of streams that waited for a
// handler of this connection while the limit was reached.
func (c *conn) runHandlers(st *stream) {
	for st != nil {
		c.runHandler(st)
		c.mu.Lock()
		c.running--
		st = nil
		for len(c.queue) > 0 {
			next := c.queue[0]
			c.queue = c.queue[1:]
			if next.resetErr == nil {
				st = next
				c.running++
				break
			}
		}
		if c.running == 0 && len(c.streams) == 0 {
			if c.goingAway {
				c.closeAfterFlushLocked()
			} else if c.idleTimer != nil {
				c.idleTimer.Reset(c.cfg.IdleTimeout)
			}
		}
		c.mu.Unlock()
	}
}

// runHandler serves one stream.
func (c *conn) runHandler(st *stream) {
	rw := &responseWriter{st: st, c: c, status: 0}
	if st.tooLarge {
		rw.hdr = http.Header{}
		rw.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
		rw.finish()
		c.handlerEnd(st)
		return
	}
	ctx, cancel := context.WithCancel(c.baseCtx)
	c.mu.Lock()
	st.cancel = cancel
	reset := st.resetErr != nil
	c.mu.Unlock()
	if reset {
		cancel()
	}
	r := st.req.WithContext(ctx)
	rw.head = r.Method == http.MethodHead
	rw.hdr = make(http.Header, 4)
	completed := false
	defer func() {
		if !completed {
			p := recover()
			if p != nil && p != http.ErrAbortHandler {
				buf := make([]byte, 64<<10)
				buf = buf[:runtime.Stack(buf, false)]
				c.cfg.Logger.Error(fmt.Errorf("%v", p), "HTTP handler panicked", "method", r.Method, "uri", r.RequestURI, "stack", string(buf))
			}
			c.abort(st)
		}
		cancel()
		c.handlerEnd(st)
	}()
	c.h.ServeHTTP(rw, r)
	rw.finish()
	completed = true
}

// abort resets st after its handler panicked.
func (c *conn) abort(st *stream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st.resetErr != nil || c.closed {
		return
	}
	c.closeStreamLocked(st, errStreamReset)
	c.resetLocked(st.id, http2.ErrCodeInternal)
	c.flushLocked()
}

// handlerEnd returns the unread body's bytes to the connection window and,
// when the client is still sending a body nobody will read, resets the
// stream with NO_ERROR (RFC 9113 §8.1).
func (c *conn) handlerEnd(st *stream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st.handlerDone = true
	if n := len(st.rbuf) - st.roff; n > 0 {
		c.returnConnLocked(int64(n))
	}
	st.rbuf, st.roff = nil, 0
	if st.inMap && !st.remoteClosed && st.localClosed {
		c.closeStreamLocked(st, errStreamReset)
		c.resetLocked(st.id, http2.ErrCodeNo)
	}
	c.flushLocked()
}

// requestBody is the body of a request that has one: bytes of DATA frames
// buffered by the reader.
type requestBody struct {
	st     *stream
	closed bool
}

func (b *requestBody) Read(p []byte) (int, error) {
	st := b.st
	c := st.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if b.closed {
			return 0, errors.New("h2serve: read on closed body")
		}
		if n := len(st.rbuf) - st.roff; n > 0 {
			n = copy(p, st.rbuf[st.roff:])
			st.roff += n
			if st.roff == len(st.rbuf) {
				st.rbuf, st.roff = st.rbuf[:0], 0
			}
			c.consumedLocked(st, int64(n))
			return n, nil
		}
		if st.rEOF {
			return 0, io.EOF
		}
		if st.resetErr != nil {
			return 0, st.resetErr
		}
		st.cond.Wait()
	}
}

// consumedLocked returns n read bytes to the peer's windows, coalesced.
func (c *conn) consumedLocked(st *stream, n int64) {
	c.returnConnLocked(n)
	if st.remoteClosed {
		return
	}
	st.unacked += n
	if st.unacked >= int64(c.cfg.StreamWindow)/2 {
		_ = c.wfr.WriteWindowUpdate(st.id, uint32(st.unacked))
		st.recvWindow += st.unacked
		st.unacked = 0
	}
	if len(c.wbuf) > 0 {
		c.flushLocked()
	}
}

func (b *requestBody) Close() error {
	c := b.st.c
	c.mu.Lock()
	defer c.mu.Unlock()
	b.closed = true
	return nil
}
