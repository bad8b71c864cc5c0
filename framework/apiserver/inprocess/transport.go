package inprocess

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// maxUnread is how many written bytes may wait for the reader before the
// handler's writes block.
const maxUnread = 1 << 20

// keepBuffer is the largest body buffer kept for the next writes once read.
const keepBuffer = 64 << 10

// remoteAddr is the RemoteAddr of in-process requests (audit logs it as the
// source IP).
const remoteAddr = "127.0.0.1:0"

// Transport serves requests with Handler as User.
type Transport struct {
	handler http.Handler
	user    *filters.User
}

var _ http.RoundTripper = (*Transport)(nil)

// New returns a Transport that serves every request with h as user (see the
// package contract); system:authenticated is added to user's groups.
func New(h http.Handler, user filters.User) *Transport {
	u := user
	u.Groups = slices.Clone(user.Groups)
	if !slices.Contains(u.Groups, filters.GroupAuthenticated) {
		u.Groups = append(u.Groups, filters.GroupAuthenticated)
	}
	return &Transport{handler: h, user: &u}
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		closeBody(req)
		return nil, err
	}
	ctx, cancel := context.WithCancel(filters.WithUser(req.Context(), t.user))
	sreq := req.Clone(ctx)
	u := *req.URL
	u.Scheme, u.Host, u.User = "", "", nil
	sreq.URL = &u
	sreq.RequestURI = u.RequestURI()
	sreq.Host = req.URL.Host
	sreq.RemoteAddr = remoteAddr
	sreq.Proto, sreq.ProtoMajor, sreq.ProtoMinor = "HTTP/1.1", 1, 1
	sreq.TLS = nil
	sreq.Close = false
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	w := &responseWriter{header: http.Header{}, ready: make(chan struct{}), cancel: cancel, head: req.Method == http.MethodHead}
	w.cond = sync.NewCond(&w.mu)
	go w.serve(t.handler, sreq)
	select {
	case <-w.ready:
	case <-ctx.Done():
		if req.Context().Err() != nil { // the client gave up first
			w.close(ctx.Err())
			return nil, context.Cause(ctx)
		}
		// serve cancels ctx once the handler returned, after its header:
		// both were ready, and the answer wins.
		<-w.ready
	}
	resp := &http.Response{
		Status:        strconv.Itoa(w.code) + " " + http.StatusText(w.code),
		StatusCode:    w.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          body{w},
		ContentLength: -1,
		Request:       req,
	}
	if n, err := strconv.ParseInt(w.sent.Get("Content-Length"), 10, 64); err == nil {
		resp.ContentLength = n
	}
	return resp, nil
}

// closeBody closes req's body as RoundTrip must, even on error.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// responseWriter is the handler's http.ResponseWriter and the pipe the
// response body is read from.
type responseWriter struct {
	header http.Header
	// sent is the header as it was when the status was written.
	sent   http.Header
	code   int
	ready  chan struct{} // closed once code and sent are set
	cancel context.CancelFunc
	head   bool // a HEAD request: the body written is dropped

	mu   sync.Mutex // guards the fields below
	cond *sync.Cond // signalled when buf, done or err change
	buf  []byte     // written; buf[off:] is not read yet
	off  int
	done bool  // the handler returned
	err  error // the body ends with err (after buf) once done, or at once when the reader closed
}

func (w *responseWriter) serve(h http.Handler, r *http.Request) {
	var err error
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				panic(p)
			}
			err = errors.New("inprocess: handler aborted the response")
		}
		if err == nil {
			err = r.Context().Err() // the client gave up: its reads fail as over a network
		}
		w.WriteHeader(http.StatusOK) // a handler that wrote nothing answers 200
		w.close(err)
		w.cancel()
		closeBody(r)
	}()
	h.ServeHTTP(w, r)
}

// close ends the body with err (io.EOF when nil) after what is unread.
func (w *responseWriter) close(err error) {
	w.mu.Lock()
	if !w.done {
		w.done = true
		if w.err == nil {
			w.err = err
			if err == nil {
				w.err = io.EOF
			}
		}
	}
	w.cond.Broadcast()
	w.mu.Unlock()
}

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(code int) {
	if w.sent != nil {
		return
	}
	if code >= 100 && code < 200 {
		return // informational answers are not passed on
	}
	w.code, w.sent = code, w.header.Clone()
	close(w.ready)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.head {
		return len(p), nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.buf)-w.off >= maxUnread && w.err == nil {
		w.cond.Wait()
	}
	if w.err != nil {
		return 0, w.err
	}
	w.buf = append(w.buf, p...)
	w.cond.Broadcast()
	return len(p), nil
}

// Flush implements http.Flusher: written bytes are readable at once.
func (w *responseWriter) Flush() { w.WriteHeader(http.StatusOK) }

// read copies unread bytes into p, waiting for some.
func (w *responseWriter) read(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.off == len(w.buf) && w.err == nil {
		w.cond.Wait()
	}
	if w.off == len(w.buf) || (w.err != nil && !w.done) {
		return 0, w.err
	}
	n := copy(p, w.buf[w.off:])
	w.off += n
	if w.off == len(w.buf) {
		w.off = 0
		if cap(w.buf) > keepBuffer {
			w.buf = nil // let a large body's array go
		} else {
			w.buf = w.buf[:0]
		}
	}
	w.cond.Broadcast()
	return n, nil
}

// closeRead is the reader closing the body: the handler's context ends and
// its writes fail.
func (w *responseWriter) closeRead() {
	w.mu.Lock()
	if w.err == nil {
		w.err = errClosed
	}
	w.buf, w.off = nil, 0
	w.cond.Broadcast()
	w.mu.Unlock()
	w.cancel()
}

var errClosed = errors.New("inprocess: response body closed")

// body is the response body.
type body struct{ w *responseWriter }

func (b body) Read(p []byte) (int, error) { return b.w.read(p) }

func (b body) Close() error {
	b.w.closeRead()
	return nil
}
