package apiserver

import (
	"context"
	"crypto/tls"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/apiserver/h2serve"
)

// Serving limits, as kube-apiserver sets them on Go's server
// (k8s.io/apiserver/pkg/server/secure_serving.go).
const (
	// DefaultMaxStreamsPerConnection bounds the concurrent HTTP/2 streams of
	// one connection. It matches the initial limit Go's HTTP/2 client assumes,
	// and with it Go's server closes a connection once a client has more than
	// 4× this many requests waiting for a handler (rapid reset).
	DefaultMaxStreamsPerConnection = 100
	// http2BodyBuffer is the HTTP/2 frame size and per-stream receive window:
	// at least 99% of serialized objects are smaller, so most writes arrive in
	// one frame, and it is small enough to buffer once per stream.
	http2BodyBuffer = 256 << 10
	// maxHeaderBytes bounds request headers (HTTP/1.1) and the HTTP/2 header
	// list (SETTINGS_MAX_HEADER_LIST_SIZE), CONTINUATION frames included.
	maxHeaderBytes = 1 << 20
	// idleTimeout closes keep-alive connections idle this long (as
	// http.DefaultTransport's IdleConnTimeout).
	idleTimeout = 90 * time.Second
	// readHeaderTimeout bounds reading a request's headers.
	readHeaderTimeout = 32 * time.Second
)

// ServingOptions configure NewHTTPServer. The zero value serves HTTP/1.1 and
// HTTP/2 with kube-apiserver's limits.
type ServingOptions struct {
	// TLS serves HTTPS (see Serve); it must provide the certificate
	// (Certificates, GetCertificate or GetConfigForClient). Its NextProtos
	// get "h2" and "http/1.1" when missing. Without TLS the server speaks
	// HTTP/1.1 only.
	TLS *tls.Config
	// DisableHTTP2 serves HTTP/1.1 only.
	DisableHTTP2 bool
	// GoHTTP2 serves HTTP/2 with Go's server (net/http's bundled one)
	// instead of package h2serve: the fallback, and the other side of A/B
	// benchmarks.
	GoHTTP2 bool
	// MaxStreamsPerConnection bounds concurrent HTTP/2 streams per connection
	// (default DefaultMaxStreamsPerConnection).
	MaxStreamsPerConnection int
	// Logger receives the server's connection errors (malformed requests,
	// HTTP/2 protocol errors); TLS handshake failures, which any port scan
	// causes, at V(1).
	Logger logr.Logger
}

// NewHTTPServer returns the *http.Server that serves h (run it with Serve):
// request contexts derive from ctx; HTTP/2 over TLS with at most
// MaxStreamsPerConnection concurrent streams per connection, 256 KiB frames and
// per-stream receive windows (the connection window is their sum over the
// streams), header lists of at most 1 MiB; keep-alive connections idle for 90 s
// are closed.
//
// HTTP/2 is served by package h2serve (net/http's TLSNextProto hook; net/http
// still does the TLS handshakes and HTTP/1.1): it costs less CPU per request
// than Go's server, whose goroutine handoffs per request it avoids. Its
// protection against the known HTTP/2 abuse patterns: a client resetting
// streams faster than handlers finish (CVE-2023-44487, rapid reset) gets at
// most MaxStreamsPerConnection handlers running and the connection is closed
// with ENHANCE_YOUR_CALM once more than 4× that many wait; CONTINUATION floods
// (CVE-2023-45288) are bounded by the header list limit, beyond which the
// connection is closed without decoding further frames; a peer that does not
// read what it asks for (ping and settings floods) has its connection closed
// once a bounded buffer is full or a write has waited 2 minutes.
//
// ServingOptions.GoHTTP2 serves HTTP/2 with Go's server instead (the
// fallback), which has the same limits and protections; there an HTTP/2
// request's goroutine gets its stack before h runs (presizedStack).
func NewHTTPServer(ctx context.Context, h http.Handler, opts ServingOptions) *http.Server {
	ours := !opts.DisableHTTP2 && !opts.GoHTTP2 && opts.TLS != nil
	if !ours {
		h = presizedStack(h)
	}
	srv := &http.Server{
		Handler:           h,
		MaxHeaderBytes:    maxHeaderBytes,
		IdleTimeout:       idleTimeout,
		ReadHeaderTimeout: readHeaderTimeout,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          log.New(serverLogWriter{opts.Logger}, "", 0),
		TLSConfig:         opts.TLS,
	}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(!opts.DisableHTTP2)
	srv.Protocols = protocols
	if !opts.DisableHTTP2 {
		streams := opts.MaxStreamsPerConnection
		if streams <= 0 {
			streams = DefaultMaxStreamsPerConnection
		}
		if ours {
			h2serve.New(h2serve.Config{
				MaxConcurrentStreams: uint32(streams),
				MaxReadFrameSize:     http2BodyBuffer,
				StreamWindow:         http2BodyBuffer,
				MaxHeaderListSize:    maxHeaderBytes,
				IdleTimeout:          idleTimeout,
				Logger:               opts.Logger,
			}).Attach(srv)
			return srv
		}
		srv.HTTP2 = &http.HTTP2Config{
			MaxConcurrentStreams:          streams,
			MaxReadFrameSize:              http2BodyBuffer,
			MaxReceiveBufferPerStream:     http2BodyBuffer,
			MaxReceiveBufferPerConnection: http2BodyBuffer * streams,
		}
	}
	return srv
}

// Serve accepts connections on ln and serves them with srv until srv is shut
// down: over TLS when srv.TLSConfig is set (HTTP/2 and HTTP/1.1 offered by
// ALPN as srv.Protocols allows; the TLS configuration must provide the
// certificate), plain HTTP/1.1 otherwise.
func Serve(srv *http.Server, ln net.Listener) error {
	if srv.TLSConfig != nil {
		return srv.ServeTLS(ln, "", "")
	}
	return srv.Serve(ln)
}

// serverLogWriter turns the lines net/http logs into logr messages.
type serverLogWriter struct{ log logr.Logger }

func (w serverLogWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	if strings.Contains(msg, "TLS handshake error") {
		w.log.V(1).Info("TLS handshake failed", "error", msg)
	} else {
		w.log.Info("HTTP server error", "error", msg)
	}
	return len(p), nil
}
