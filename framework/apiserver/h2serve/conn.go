package h2serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// clientPreface is what an HTTP/2 client sends first (RFC 9113 §3.4).
const clientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// Bounds on what a peer can make a connection hold or do.
const (
	// pendingHighWater: handlers wait to add DATA while this much is
	// pending; pendingLimit: control frames past it close the connection.
	pendingHighWater = 512 << 10
	pendingLimit     = pendingHighWater + 256<<10
	// maxQueuedPerStream × MaxConcurrentStreams streams may wait for a
	// handler while reset streams' handlers still run.
	maxQueuedPerStream = 4
	// maxSettingsParams bounds the parameters of one SETTINGS frame.
	maxSettingsParams = 100
	// maxEmptyFrames bounds consecutive DATA frames without payload nor
	// END_STREAM (an empty DATA flood).
	maxEmptyFrames = 1000
	// recentResets is how many streams we reset whose late frames are
	// dropped without answer.
	recentResets = 64
)

// errClosed is the error of writes and reads on a connection that has ended.
var errClosed = errors.New("h2serve: connection closed")

// errStreamReset is the error of writes and reads on a reset stream.
var errStreamReset = errors.New("h2serve: stream reset")

type conn struct {
	srv        *Server
	cfg        *Config
	nc         net.Conn
	h          http.Handler
	baseCtx    context.Context
	tlsState   *tls.ConnectionState
	remoteAddr string
	br         *bufio.Reader
	fr         *http2.Framer // reader goroutine only
	canon      map[string]string
	hdec       *hpack.Decoder

	mu sync.Mutex
	// cond is signalled when pending bytes were written, connection send
	// window opened or the connection closed, for handlers that wait for
	// those (waiters counts them).
	cond    sync.Cond
	waiters int
	streams map[uint32]*stream
	// maxStreamID is the highest stream id the peer used.
	maxStreamID    uint32
	running        int       // handlers running
	queue          []*stream // streams waiting for a handler
	resets         [recentResets]uint32
	resetsNext     int
	sendWindow     int64 // connection send window
	recvWindow     int64 // connection receive window left
	unackedConn    int64 // bytes consumed, not yet returned by WINDOW_UPDATE
	peerMaxFrame   uint32
	peerInitWindow int64
	goingAway      bool
	closed         bool
	draining       atomic.Bool // closed: the reader only drains what the peer still sends
	idleTimer      *time.Timer
	emptyFrames    int

	// write side, under mu
	wbuf     []byte
	spare    []byte
	flushing bool
	werr     error
	wfr      *http2.Framer
	henc     *hpack.Encoder
	hbuf     bytes.Buffer
	lastWD   time.Time
	// closeWhenFlushed closes the connection when the writer is done.
	closeWhenFlushed bool
}

// pendingWriter lets the write Framer append frames to c.wbuf.
type pendingWriter struct{ c *conn }

func (w pendingWriter) Write(p []byte) (int, error) {
	w.c.wbuf = append(w.c.wbuf, p...)
	return len(p), nil
}

func newConn(s *Server, ctx context.Context, nc net.Conn, h http.Handler) *conn {
	c := &conn{
		srv: s, cfg: &s.cfg, nc: nc, h: h, baseCtx: ctx,
		remoteAddr:     nc.RemoteAddr().String(),
		canon:          map[string]string{},
		streams:        map[uint32]*stream{},
		sendWindow:     initialWindow,
		recvWindow:     int64(s.cfg.ConnWindow),
		peerMaxFrame:   1 << 14,
		peerInitWindow: initialWindow,
	}
	c.cond.L = &c.mu
	if tc, ok := nc.(*tls.Conn); ok {
		st := tc.ConnectionState()
		c.tlsState = &st
	}
	c.br = bufio.NewReaderSize(nc, 16<<10)
	c.fr = http2.NewFramer(nil, c.br)
	c.fr.SetReuseFrames()
	c.fr.SetMaxReadFrameSize(s.cfg.MaxReadFrameSize)
	c.fr.MaxHeaderListSize = s.cfg.MaxHeaderListSize
	c.hdec = hpack.NewDecoder(4096, nil)
	c.fr.ReadMetaHeaders = c.hdec
	c.wfr = http2.NewFramer(pendingWriter{c}, nil)
	c.henc = hpack.NewEncoder(&c.hbuf)
	return c
}

// connError ends the connection with a GOAWAY of code.
type connError struct {
	code http2.ErrCode
	why  string
}

func (e connError) Error() string { return fmt.Sprintf("connection error %v: %s", e.code, e.why) }

// serve runs the reader until the connection ends.
func (c *conn) serve() {
	defer c.closeAll()
	c.mu.Lock()
	_ = c.wfr.WriteSettings(
		http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: c.cfg.MaxConcurrentStreams},
		http2.Setting{ID: http2.SettingMaxFrameSize, Val: c.cfg.MaxReadFrameSize},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: uint32(c.cfg.StreamWindow)},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: c.cfg.MaxHeaderListSize},
	)
	if d := c.cfg.ConnWindow - initialWindow; d > 0 {
		_ = c.wfr.WriteWindowUpdate(0, uint32(d))
	}
	c.flushLocked()
	if c.cfg.IdleTimeout > 0 {
		c.idleTimer = time.AfterFunc(c.cfg.IdleTimeout, c.idleExpired)
	}
	c.mu.Unlock()

	_ = c.nc.SetReadDeadline(time.Now().Add(c.cfg.PrefaceTimeout))
	var preface [len(clientPreface)]byte
	if _, err := io.ReadFull(c.br, preface[:]); err != nil || string(preface[:]) != clientPreface {
		c.logf("bad client preface", err)
		return
	}
	f, err := c.fr.ReadFrame()
	if err != nil {
		if !c.readError(err) {
			return
		}
	} else if sf, ok := f.(*http2.SettingsFrame); !ok || sf.IsAck() {
		c.goAway(http2.ErrCodeProtocol, "first frame is not SETTINGS")
	} else {
		_ = c.nc.SetReadDeadline(time.Time{})
	}
	for {
		if c.draining.Load() {
			f = nil // closed gently: read what the peer still sends, until EOF
		}
		if err := c.processFrame(f); err != nil {
			var ce connError
			if !errors.As(err, &ce) {
				return
			}
			c.goAway(ce.code, ce.why) // closes gently: the loop drains
		}
		if f, err = c.fr.ReadFrame(); err != nil {
			if !c.readError(err) {
				return
			}
			f = nil
		}
	}
}

// readError handles an error of ReadFrame; true when reading goes on.
func (c *conn) readError(err error) bool {
	var se http2.StreamError
	var ce http2.ConnectionError
	switch {
	case errors.As(err, &se):
		c.mu.Lock()
		if se.StreamID > c.maxStreamID && se.StreamID%2 == 1 {
			c.maxStreamID = se.StreamID
		}
		if st := c.streams[se.StreamID]; st != nil {
			c.closeStreamLocked(st, errStreamReset)
		}
		c.resetLocked(se.StreamID, se.Code)
		ok := c.flushLocked()
		c.mu.Unlock()
		return ok
	case errors.As(err, &ce):
		c.goAway(http2.ErrCode(ce), "frame: "+err.Error())
		return true // drain
	case errors.Is(err, http2.ErrFrameTooLarge):
		c.goAway(http2.ErrCodeFrameSize, "frame too large")
		return true
	default:
		c.logf("read", err)
	}
	return false
}

func (c *conn) logf(what string, err error) {
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		c.cfg.Logger.V(1).Info("HTTP/2 connection ended", "what", what, "remote", c.remoteAddr, "error", err)
	}
}

// processFrame handles one frame (nil: none).
func (c *conn) processFrame(f http2.Frame) error {
	switch f := f.(type) {
	case nil:
		return nil
	case *http2.MetaHeadersFrame:
		return c.processHeaders(f)
	case *http2.DataFrame:
		return c.processData(f)
	case *http2.SettingsFrame:
		return c.processSettings(f)
	case *http2.PingFrame:
		if f.IsAck() {
			return nil
		}
		return c.control(func() error { return c.wfr.WritePing(true, f.Data) })
	case *http2.WindowUpdateFrame:
		return c.processWindowUpdate(f)
	case *http2.RSTStreamFrame:
		return c.processReset(f)
	case *http2.PriorityFrame:
		if f.StreamDep == f.StreamID {
			return c.streamError(f.StreamID, http2.ErrCodeProtocol)
		}
		return nil
	case *http2.GoAwayFrame:
		c.startGoAway()
		if f.ErrCode != http2.ErrCodeNo {
			return io.EOF
		}
		return nil
	case *http2.PushPromiseFrame:
		return connError{http2.ErrCodeProtocol, "PUSH_PROMISE from a client"}
	case *http2.ContinuationFrame:
		// The framer merges CONTINUATION into HEADERS; a lone one is out of order.
		return connError{http2.ErrCodeProtocol, "unexpected CONTINUATION"}
	default: // unknown frame types are ignored
		return nil
	}
}

// control appends a control frame written by write and flushes; a peer that
// lets pending frames pile up past pendingLimit loses the connection.
func (c *conn) control(write func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	if len(c.wbuf) > pendingLimit {
		c.closeLocked(false)
		return connError{http2.ErrCodeEnhanceYourCalm, "peer does not read"}
	}
	if err := write(); err != nil {
		return err
	}
	if !c.flushLocked() {
		return errClosed
	}
	return nil
}

func (c *conn) streamError(id uint32, code http2.ErrCode) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.streams[id]; st != nil {
		c.closeStreamLocked(st, errStreamReset)
	}
	c.resetLocked(id, code)
	if !c.flushLocked() {
		return errClosed
	}
	return nil
}

// resetLocked queues RST_STREAM for id and remembers id so that the peer's
// frames in flight for it are dropped.
func (c *conn) resetLocked(id uint32, code http2.ErrCode) {
	_ = c.wfr.WriteRSTStream(id, code)
	c.resets[c.resetsNext] = id
	c.resetsNext = (c.resetsNext + 1) % recentResets
}

func (c *conn) recentlyReset(id uint32) bool {
	for _, r := range c.resets {
		if r == id {
			return true
		}
	}
	return false
}

func (c *conn) processSettings(f *http2.SettingsFrame) error {
	if f.IsAck() {
		return nil
	}
	if f.NumSettings() > maxSettingsParams {
		return connError{http2.ErrCodeProtocol, "too many settings"}
	}
	if err := f.ForeachSetting(func(s http2.Setting) error { return s.Valid() }); err != nil {
		var ce http2.ConnectionError
		if errors.As(err, &ce) {
			return connError{http2.ErrCode(ce), "invalid setting"}
		}
		return connError{http2.ErrCodeProtocol, "invalid setting"}
	}
	// Applied under the connection's lock, the acknowledgement appended in
	// the same step.
	return c.control(func() error {
		var err error
		_ = f.ForeachSetting(func(s http2.Setting) error {
			switch s.ID {
			case http2.SettingHeaderTableSize:
				c.henc.SetMaxDynamicTableSizeLimit(s.Val)
			case http2.SettingMaxFrameSize:
				c.peerMaxFrame = s.Val
			case http2.SettingInitialWindowSize:
				delta := int64(s.Val) - c.peerInitWindow
				c.peerInitWindow = int64(s.Val)
				for _, st := range c.streams {
					st.sendWindow += delta
					if st.sendWindow > maxWindow {
						err = connError{http2.ErrCodeFlowControl, "stream window overflow by SETTINGS"}
					}
					if delta > 0 {
						st.cond.Broadcast()
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		return c.wfr.WriteSettingsAck()
	})
}

func (c *conn) processWindowUpdate(f *http2.WindowUpdateFrame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.StreamID == 0 {
		c.sendWindow += int64(f.Increment)
		if c.sendWindow > maxWindow {
			return connError{http2.ErrCodeFlowControl, "connection window overflow"}
		}
		if c.waiters > 0 {
			c.cond.Broadcast()
		}
		return nil
	}
	if f.StreamID > c.maxStreamID {
		return connError{http2.ErrCodeProtocol, "WINDOW_UPDATE on an idle stream"}
	}
	st := c.streams[f.StreamID]
	if st == nil {
		return nil
	}
	st.sendWindow += int64(f.Increment)
	if st.sendWindow > maxWindow {
		c.closeStreamLocked(st, errStreamReset)
		c.resetLocked(st.id, http2.ErrCodeFlowControl)
		if !c.flushLocked() {
			return errClosed
		}
		return nil
	}
	st.cond.Broadcast()
	return nil
}

func (c *conn) processReset(f *http2.RSTStreamFrame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.StreamID > c.maxStreamID {
		return connError{http2.ErrCodeProtocol, "RST_STREAM on an idle stream"}
	}
	if st := c.streams[f.StreamID]; st != nil {
		c.closeStreamLocked(st, errStreamReset)
	}
	return nil
}

func (c *conn) processData(f *http2.DataFrame) error {
	id, n := f.StreamID, int64(f.Length)
	data := f.Data()
	c.mu.Lock()
	defer c.mu.Unlock()
	if n > c.recvWindow {
		return connError{http2.ErrCodeFlowControl, "connection receive window exceeded"}
	}
	c.recvWindow -= n
	st := c.streams[id]
	if st == nil || st.remoteClosed {
		// The bytes count against the connection window: give them back.
		c.returnConnLocked(n)
		if id > c.maxStreamID {
			return connError{http2.ErrCodeProtocol, "DATA on an idle stream"}
		}
		if st == nil && c.recentlyReset(id) {
			return c.flushErr()
		}
		if st != nil {
			c.closeStreamLocked(st, errStreamReset)
		}
		c.resetLocked(id, http2.ErrCodeStreamClosed)
		return c.flushErr()
	}
	if n > st.recvWindow {
		c.returnConnLocked(n)
		c.closeStreamLocked(st, errStreamReset)
		c.resetLocked(id, http2.ErrCodeFlowControl)
		return c.flushErr()
	}
	st.recvWindow -= n
	if len(data) == 0 && !f.StreamEnded() {
		c.emptyFrames++
		if c.emptyFrames > maxEmptyFrames {
			return connError{http2.ErrCodeEnhanceYourCalm, "empty DATA frames"}
		}
	} else {
		c.emptyFrames = 0
	}
	// Padding is consumed at once.
	if pad := n - int64(len(data)); pad > 0 {
		st.unacked += pad
		c.returnConnLocked(pad)
	}
	st.received += int64(len(data))
	if st.declLen >= 0 && (st.received > st.declLen || f.StreamEnded() && st.received != st.declLen) {
		c.returnConnLocked(int64(len(data)))
		c.closeStreamLocked(st, errStreamReset)
		c.resetLocked(id, http2.ErrCodeProtocol)
		return c.flushErr()
	}
	if len(data) > 0 {
		if st.handlerDone {
			c.returnConnLocked(int64(len(data)))
		} else {
			st.rbuf = append(st.rbuf, data...)
		}
	}
	if f.StreamEnded() {
		st.rEOF = true
		c.remoteEndLocked(st)
	}
	st.cond.Broadcast()
	return c.flushErr()
}

// flushErr flushes and reports a closed connection.
func (c *conn) flushErr() error {
	if !c.flushLocked() {
		return errClosed
	}
	return nil
}

// returnConnLocked gives n consumed bytes back to the connection window,
// coalescing WINDOW_UPDATEs.
func (c *conn) returnConnLocked(n int64) {
	c.unackedConn += n
	if c.unackedConn >= int64(c.cfg.ConnWindow)/4 || c.unackedConn >= 1<<20 {
		_ = c.wfr.WriteWindowUpdate(0, uint32(c.unackedConn))
		c.recvWindow += c.unackedConn
		c.unackedConn = 0
	}
}

// remoteEndLocked notes END_STREAM from the peer.
func (c *conn) remoteEndLocked(st *stream) {
	st.remoteClosed = true
	if st.localClosed {
		c.removeStreamLocked(st)
	}
}

// closeStreamLocked closes st (reset by either side, or the connection
// ended): reads and writes fail with err, the handler's context is canceled.
func (c *conn) closeStreamLocked(st *stream, err error) {
	if st.resetErr == nil {
		st.resetErr = err
	}
	st.remoteClosed, st.localClosed = true, true
	if !st.handlerDone {
		// Give back what the handler will not read.
		c.returnConnLocked(int64(len(st.rbuf) - st.roff))
		st.rbuf, st.roff = nil, 0
	}
	c.removeStreamLocked(st)
	if st.cancel != nil {
		st.cancel()
	}
	st.cond.Broadcast()
	if c.waiters > 0 {
		c.cond.Broadcast()
	}
}

// removeStreamLocked forgets a closed stream.
func (c *conn) removeStreamLocked(st *stream) {
	if !st.inMap {
		return
	}
	st.inMap = false
	delete(c.streams, st.id)
	if len(c.streams) == 0 {
		if c.goingAway && c.running == 0 {
			c.closeAfterFlushLocked()
		} else if c.idleTimer != nil {
			c.idleTimer.Reset(c.cfg.IdleTimeout)
		}
	}
}

func (c *conn) idleExpired() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.streams) > 0 || c.running > 0 || c.closed {
		return
	}
	c.goAwayLocked(http2.ErrCodeNo)
	c.closeAfterFlushLocked()
}

// startGoAway begins a graceful shutdown: GOAWAY with the last stream id,
// streams above it are ignored, and the connection is closed once the
// running streams have ended.
func (c *conn) startGoAway() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.goingAway || c.closed {
		return
	}
	c.goAwayLocked(http2.ErrCodeNo)
	if len(c.streams) == 0 && c.running == 0 {
		c.closeAfterFlushLocked()
	}
}

func (c *conn) goAwayLocked(code http2.ErrCode) {
	c.goingAway = true
	_ = c.wfr.WriteGoAway(c.maxStreamID, code, nil)
	c.flushLocked()
}

// goAway ends the connection with GOAWAY code.
func (c *conn) goAway(code http2.ErrCode, why string) {
	c.cfg.Logger.V(1).Info("HTTP/2 connection error", "remote", c.remoteAddr, "code", code, "reason", why)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.draining.Store(true)
	c.goAwayLocked(code)
	c.closeAfterFlushLocked()
}

// closeAfterFlushLocked closes the connection once pending frames are
// written (at once when nobody is writing: flushLocked wrote them), gently:
// see closeLocked.
func (c *conn) closeAfterFlushLocked() {
	c.flushLocked()
	if c.flushing {
		c.closeWhenFlushed = true
		return
	}
	c.closeLocked(true)
}

// closeLocked closes the connection: handlers' reads and writes fail, their
// contexts are canceled. gently (after GOAWAY) only shuts the sending side
// down and lets the reader drain what the peer still sends for up to a
// second before the connection is closed: closing a socket with unread bytes
// resets it, and a reset can discard our last frames before the peer reads
// them. Otherwise the reader's read fails at once.
func (c *conn) closeLocked(gently bool) {
	if c.closed {
		return
	}
	c.closed = true
	c.draining.Store(true)
	if c.werr == nil {
		c.werr = errClosed
	}
	if c.idleTimer != nil {
		c.idleTimer.Stop()
	}
	raw := c.nc
	if tc, ok := c.nc.(*tls.Conn); ok {
		// Close without a write (close_notify) that a peer may block.
		raw = tc.NetConn()
	}
	hc, ok := raw.(interface{ CloseWrite() error })
	if gently && ok && hc.CloseWrite() == nil {
		_ = raw.SetReadDeadline(time.Now().Add(time.Second))
	} else {
		_ = raw.Close()
	}
	for _, st := range c.streams {
		c.closeStreamLocked(st, errClosed)
	}
	c.queue = nil
	c.cond.Broadcast()
}

// closeAll ends the connection when the reader returns.
func (c *conn) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLocked(false)
}
