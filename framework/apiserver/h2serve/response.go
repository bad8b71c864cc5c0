package h2serve

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2/hpack"
)

// bufferSize is how much response body a handler writes before it is sent.
const bufferSize = 8 << 10

// responseWriter is a stream's http.ResponseWriter, used by its handler
// only. A response whose handler returns without flushing is sent whole:
// HEADERS (with content-length), DATA and END_STREAM in one write.
type responseWriter struct {
	st   *stream
	c    *conn
	head bool // the request's method is HEAD: the body is not sent
	hdr  http.Header

	status     int  // 0 until WriteHeader
	sentHeader bool // HEADERS queued
	done       bool
	buf        []byte
	written    int64
	declLen    int64 // content-length the handler set, or -1
	err        error
}

var (
	_ http.ResponseWriter = (*responseWriter)(nil)
	_ http.Flusher        = (*responseWriter)(nil)
)

func (w *responseWriter) Header() http.Header { return w.hdr }

func (w *responseWriter) WriteHeader(code int) {
	if w.status != 0 || w.done {
		return
	}
	if code < 100 || code > 999 {
		panic("h2serve: invalid WriteHeader code " + strconv.Itoa(code))
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		// Informational responses go out at once; the final one follows.
		if code == http.StatusContinue {
			return // the client sends its body without waiting
		}
		w.writeInformational(code)
		return
	}
	w.status = code
	w.declLen = -1
	if cl := w.hdr.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n >= 0 {
			w.declLen = n
		} else {
			w.hdr.Del("Content-Length")
		}
	}
}

func (w *responseWriter) writeInformational(code int) {
	c := w.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.st.resetErr != nil || c.werr != nil {
		return
	}
	c.encodeHeaderLocked(code, w.hdr, "", "", "")
	c.writeHeadersLocked(w.st.id, false)
	c.flushLocked()
}

func bodyAllowed(status int) bool {
	return !(status >= 100 && status < 200 || status == http.StatusNoContent || status == http.StatusNotModified)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, errors.New("h2serve: write after handler returned")
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.declLen >= 0 && w.written+int64(len(p)) > w.declLen {
		return 0, http.ErrContentLength
	}
	w.written += int64(len(p))
	if w.head {
		return len(p), nil
	}
	n := 0
	for len(p) > 0 {
		if w.buf == nil {
			w.buf = w.c.srv.getBuffer()
		}
		k := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf = w.buf[:len(w.buf)+k]
		p = p[k:]
		n += k
		if len(w.buf) == cap(w.buf) {
			if err := w.send(false); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

func (w *responseWriter) WriteString(s string) (int, error) {
	// Small strings are the common case; Write copies anyway.
	return w.Write([]byte(s))
}

// Flush sends the headers and buffered body.
func (w *responseWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush, reporting a reset stream or ended connection.
func (w *responseWriter) FlushError() error {
	if w.done {
		return errors.New("h2serve: flush after handler returned")
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.send(false)
}

// finish sends what is left of the response, ending the stream.
func (w *responseWriter) finish() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	_ = w.send(true)
	w.done = true
	if w.buf != nil {
		w.c.srv.putBuffer(w.buf)
		w.buf = nil
	}
}

// send queues the headers (when not yet sent) and the buffered body, with
// END_STREAM when end, and flushes.
func (w *responseWriter) send(end bool) error {
	if w.err != nil {
		return w.err
	}
	c := w.c
	contentLength := ""
	if !w.sentHeader && end && w.declLen < 0 && bodyAllowed(w.status) && w.hdr.Get("Transfer-Encoding") == "" {
		if !w.head || w.written > 0 {
			contentLength = strconv.FormatInt(w.written, 10)
		}
	}
	contentType := ""
	if !w.sentHeader && bodyAllowed(w.status) && len(w.buf) > 0 {
		if _, ok := w.hdr["Content-Type"]; !ok && w.hdr.Get("Content-Encoding") == "" {
			contentType = http.DetectContentType(w.buf)
		}
	}
	var date string
	if !w.sentHeader {
		if _, ok := w.hdr["Date"]; !ok {
			date = c.srv.dateHeader()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	err := w.st.resetErr
	if err == nil && c.werr != nil {
		err = errClosed
	}
	if err != nil {
		w.err = err
		return err
	}
	if !w.sentHeader {
		w.sentHeader = true
		headersEnd := end && len(w.buf) == 0
		c.encodeHeaderLocked(w.status, w.hdr, contentLength, contentType, date)
		c.writeHeadersLocked(w.st.id, headersEnd)
		if headersEnd {
			c.localEndLocked(w.st)
			if !c.flushLocked() {
				return errClosed
			}
			return nil
		}
	}
	if len(w.buf) > 0 || end {
		if err := c.writeDataLocked(w.st, w.buf, end); err != nil {
			w.err = err
			return err
		}
		w.buf = w.buf[:0]
	}
	if !c.flushLocked() {
		w.err = errClosed
		return errClosed
	}
	return nil
}

// encodeHeaderLocked HPACK-encodes a response header block into c.hbuf: the
// status, h without connection-specific or invalid fields, and contentLength,
// contentType and date unless empty.
func (c *conn) encodeHeaderLocked(status int, h http.Header, contentLength, contentType, date string) {
	c.henc.WriteField(hpack.HeaderField{Name: ":status", Value: statusText(status)})
	for k, vv := range h {
		name := lowerHeader(k)
		if connectionSpecific(name) || name == "trailer" {
			continue
		}
		if name == "te" {
			continue
		}
		if !httpguts.ValidHeaderFieldName(k) {
			continue // as Go's server: such a field is dropped
		}
		for _, v := range vv {
			v = strings.TrimSpace(v)
			if !httpguts.ValidHeaderFieldValue(v) {
				continue
			}
			c.henc.WriteField(hpack.HeaderField{Name: name, Value: v, Sensitive: name == "set-cookie" || name == "authorization"})
		}
	}
	if contentType != "" {
		c.henc.WriteField(hpack.HeaderField{Name: "content-type", Value: contentType})
	}
	if contentLength != "" {
		c.henc.WriteField(hpack.HeaderField{Name: "content-length", Value: contentLength})
	}
	if date != "" {
		c.henc.WriteField(hpack.HeaderField{Name: "date", Value: date})
	}
}

// statusText is the :status value of code.
func statusText(code int) string {
	switch code {
	case 200:
		return "200"
	case 201:
		return "201"
	case 404:
		return "404"
	}
	return strconv.Itoa(code)
}

// lowerHeader is the lower-case form of a header name, without allocating
// for the common canonical names.
func lowerHeader(k string) string {
	if s, ok := commonLower[k]; ok {
		return s
	}
	return strings.ToLower(k)
}

// commonLower maps common canonical response header names to their
// lower-case form (a read-only table).
var commonLower = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		"accept-ranges", "audit-id", "cache-control", "content-encoding", "content-language", "content-length",
		"content-type", "date", "etag", "expires", "last-modified", "location", "retry-after", "set-cookie",
		"vary", "warning", "www-authenticate", "x-content-type-options", "x-kubernetes-pf-flowschema-uid",
		"x-kubernetes-pf-prioritylevel-uid", "x-stream-protocol-version",
	} {
		m[http.CanonicalHeaderKey(s)] = s
	}
	return m
}()
