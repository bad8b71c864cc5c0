package h2serve

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
)

// Config holds a Server's limits; zero fields get the defaults named on them.
type Config struct {
	// MaxConcurrentStreams bounds the open streams of a connection (default
	// 100); it also bounds the running handlers of a connection.
	MaxConcurrentStreams uint32
	// MaxReadFrameSize is the largest frame accepted (default 256 KiB).
	MaxReadFrameSize uint32
	// StreamWindow is the receive window of each stream (default 256 KiB).
	StreamWindow int32
	// ConnWindow is the receive window of a connection (default
	// StreamWindow × MaxConcurrentStreams, at most 2³¹-1).
	ConnWindow int32
	// MaxHeaderListSize bounds a request's header list (default 1 MiB).
	MaxHeaderListSize uint32
	// IdleTimeout closes a connection with no open stream this long (default
	// 90 s; negative: never).
	IdleTimeout time.Duration
	// PrefaceTimeout bounds reading the client's connection preface
	// (default 10 s).
	PrefaceTimeout time.Duration
	// WriteTimeout closes a connection whose peer accepts no bytes for this
	// long while we have some to send (default 2 min).
	WriteTimeout time.Duration
	// Logger receives connection errors at V(1) and handler panics.
	Logger logr.Logger
}

func (c *Config) setDefaults() {
	if c.MaxConcurrentStreams == 0 {
		c.MaxConcurrentStreams = 100
	}
	if c.MaxReadFrameSize == 0 {
		c.MaxReadFrameSize = 256 << 10
	}
	c.MaxReadFrameSize = min(max(c.MaxReadFrameSize, 1<<14), 1<<24-1)
	if c.StreamWindow <= 0 {
		c.StreamWindow = 256 << 10
	}
	if c.ConnWindow <= 0 {
		c.ConnWindow = int32(min(int64(c.StreamWindow)*int64(c.MaxConcurrentStreams), maxWindow))
	}
	c.ConnWindow = max(c.ConnWindow, initialWindow)
	if c.MaxHeaderListSize == 0 {
		c.MaxHeaderListSize = 1 << 20
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 90 * time.Second
	}
	if c.PrefaceTimeout <= 0 {
		c.PrefaceTimeout = 10 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 2 * time.Minute
	}
}

const (
	initialWindow = 65535
	maxWindow     = 1<<31 - 1
)

// Server serves HTTP/2 connections. Its zero value is not usable: use New.
type Server struct {
	cfg  Config
	pool workerPool

	mu       sync.Mutex
	conns    map[*conn]struct{}
	shutdown bool

	date atomic.Pointer[dateValue]
	// buffers holds response writers' body buffers (*[]byte).
	buffers sync.Pool
}

// getBuffer is an empty response body buffer of bufferSize.
func (s *Server) getBuffer() []byte {
	if b, ok := s.buffers.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, bufferSize)
}

// putBuffer keeps b for another response.
func (s *Server) putBuffer(b []byte) {
	if cap(b) == bufferSize {
		s.buffers.Put(&b)
	}
}

// New returns a Server with cfg's limits.
func New(cfg Config) *Server {
	cfg.setDefaults()
	s := &Server{cfg: cfg, conns: map[*conn]struct{}{}}
	return s
}

// Attach makes hs serve HTTP/2 over TLS with s: hs.TLSNextProto["h2"] is
// s.ServeConn, hs.TLSConfig offers "h2" before "http/1.1", and hs.Shutdown
// makes s send GOAWAY on every connection and close each once its streams
// have ended. hs.Protocols must allow HTTP/2 (or be nil).
func (s *Server) Attach(hs *http.Server) {
	if hs.TLSNextProto == nil {
		hs.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	hs.TLSNextProto["h2"] = func(hs *http.Server, c *tls.Conn, h http.Handler) {
		ctx := context.Background()
		if bc, ok := h.(interface{ BaseContext() context.Context }); ok {
			ctx = bc.BaseContext()
		}
		s.ServeConn(ctx, c, h)
	}
	if hs.TLSConfig != nil {
		hs.TLSConfig = hs.TLSConfig.Clone()
		protos := []string{"h2"}
		for _, p := range hs.TLSConfig.NextProtos {
			if p != "h2" {
				protos = append(protos, p)
			}
		}
		hs.TLSConfig.NextProtos = protos
	}
	hs.RegisterOnShutdown(s.Shutdown)
}

// Shutdown sends GOAWAY on every connection, lets their running streams end
// and then closes them; new connections are closed at once. Idle workers exit.
func (s *Server) Shutdown() {
	s.mu.Lock()
	s.shutdown = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.startGoAway()
	}
	s.pool.close()
}

// ServeConn serves the HTTP/2 connection nc (whose TLS handshake, if any, is
// done: it must have negotiated "h2") with h until the connection ends;
// request contexts derive from ctx.
func (s *Server) ServeConn(ctx context.Context, nc net.Conn, h http.Handler) {
	c := newConn(s, ctx, nc, h)
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		_ = nc.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	c.serve()
}

// dateValue is the Date header of one second.
type dateValue struct {
	sec int64
	s   string
}

// dateHeader is the Date header for now, formatted once a second.
func (s *Server) dateHeader() string {
	now := time.Now()
	sec := now.Unix()
	if d := s.date.Load(); d != nil && d.sec == sec {
		return d.s
	}
	d := &dateValue{sec: sec, s: now.UTC().Format(http.TimeFormat)}
	s.date.Store(d)
	return d.s
}

// workerPool keeps goroutines that have served a stream, with the stack the
// handler chain grew, for the next stream of any connection.
type workerPool struct {
	mu     sync.Mutex
	idle   []*worker
	closed bool
}

// maxIdleWorkers bounds the workers kept idle; maxWorkerIdle is how long one
// may stay idle before the pool lets it go.
const (
	maxIdleWorkers = 256
	maxWorkerIdle  = 30 * time.Second
)

type worker struct {
	ch    chan *stream
	since time.Time
}

// dispatch runs st's handler on an idle worker, or on a new one.
func (p *workerPool) dispatch(st *stream) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.ch <- st
		return
	}
	p.mu.Unlock()
	go p.run(&worker{ch: make(chan *stream, 1)}, st)
}

func (p *workerPool) run(w *worker, st *stream) {
	for st != nil {
		st.c.runHandlers(st)
		if !p.putIdle(w) {
			return
		}
		st = <-w.ch
	}
}

// putIdle adds w to the idle workers; false when w should exit instead. The
// longest idle worker is let go when it has been idle too long.
func (p *workerPool) putIdle(w *worker) bool {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= maxIdleWorkers {
		return false
	}
	if len(p.idle) > 0 && now.Sub(p.idle[0].since) > maxWorkerIdle {
		old := p.idle[0]
		copy(p.idle, p.idle[1:])
		p.idle[len(p.idle)-1] = nil
		p.idle = p.idle[:len(p.idle)-1]
		old.ch <- nil
	}
	w.since = now
	p.idle = append(p.idle, w)
	return true
}

// close lets the idle workers exit and keeps no more.
func (p *workerPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, w := range p.idle {
		w.ch <- nil
	}
	p.idle = nil
}
