package rest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// buildTLS turns TLSConfig into a *tls.Config (nil when nothing is configured).
func buildTLS(c TLSConfig) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.Insecure, ServerName: c.ServerName} //nolint:gosec // Insecure is an explicit opt-in.
	ca := c.CAData
	if len(ca) == 0 && c.CAFile != "" {
		b, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read CA file: %w", err)
		}
		ca = b
	}
	if len(ca) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, errors.New("CA data holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	cert, key := c.CertData, c.KeyData
	var err error
	if len(cert) == 0 && c.CertFile != "" {
		if cert, err = os.ReadFile(c.CertFile); err != nil {
			return nil, fmt.Errorf("read client certificate: %w", err)
		}
	}
	if len(key) == 0 && c.KeyFile != "" {
		if key, err = os.ReadFile(c.KeyFile); err != nil {
			return nil, fmt.Errorf("read client key: %w", err)
		}
	}
	if len(cert) > 0 {
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("load client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// authTransport adds credentials and the user agent to every request.
type authTransport struct {
	base      http.RoundTripper
	userAgent string
	token     *tokenSource
	user      string
	password  string
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", t.userAgent)
	}
	if req.Header.Get("Authorization") == "" {
		switch {
		case t.token != nil:
			tok, err := t.token.Token()
			if err != nil {
				return nil, err
			}
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
		case t.user != "" || t.password != "":
			req.SetBasicAuth(t.user, t.password)
		}
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections closes the base transport's idle connections (without
// it http.Client.CloseIdleConnections would not reach them).
func (t *authTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// firstConn makes the HTTPS requests that start before the client has any
// connection to their host wait until the first of them has one (or failed):
// over HTTP/2 they then share it instead of each dialling, and paying a TLS
// handshake for, a connection of its own that the pool would close right
// after; over HTTP/1.1 they go on to dial as before. Only that first burst
// per host waits, and only until the connection is established, not for the
// first response.
type firstConn struct {
	base  http.RoundTripper
	hosts sync.Map // host → *connGate
}

type connGate struct {
	claimed atomic.Bool
	open    chan struct{} // closed once the first request got a connection or failed
	once    sync.Once
}

func (f *firstConn) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" {
		return f.base.RoundTrip(req)
	}
	v, ok := f.hosts.Load(req.URL.Host)
	if !ok {
		v, _ = f.hosts.LoadOrStore(req.URL.Host, &connGate{open: make(chan struct{})})
	}
	g := v.(*connGate)
	select {
	case <-g.open:
		return f.base.RoundTrip(req)
	default:
	}
	if g.claimed.CompareAndSwap(false, true) {
		opened := func() { g.once.Do(func() { close(g.open) }) }
		defer opened()
		trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { opened() }}
		return f.base.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	}
	select {
	case <-g.open:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	return f.base.RoundTrip(req)
}

// CloseIdleConnections closes the base transport's idle connections.
func (f *firstConn) CloseIdleConnections() {
	if c, ok := f.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// tokenSource yields the bearer token, re-reading the file when it changes.
type tokenSource struct {
	static string
	file   string

	mu      sync.Mutex // guards the fields below
	cached  string
	modTime time.Time
	size    int64
	loaded  bool
}

// Token returns the current token.
func (s *tokenSource) Token() (string, error) {
	if s.file == "" {
		return s.static, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fi, err := os.Stat(s.file)
	if err != nil {
		if s.loaded {
			return s.cached, nil // keep the last good token while the file is being replaced
		}
		return "", fmt.Errorf("read bearer token file: %w", err)
	}
	if s.loaded && fi.ModTime().Equal(s.modTime) && fi.Size() == s.size {
		return s.cached, nil
	}
	b, err := os.ReadFile(s.file)
	if err != nil {
		if s.loaded {
			return s.cached, nil
		}
		return "", fmt.Errorf("read bearer token file: %w", err)
	}
	s.cached, s.modTime, s.size, s.loaded = strings.TrimSpace(string(b)), fi.ModTime(), fi.Size(), true
	return s.cached, nil
}

// newHTTPClient builds the *http.Client for cfg. It has no overall timeout, so
// that watches can stream; per-request timeouts are applied by Client.Do.
func newHTTPClient(cfg *Config) (*http.Client, error) {
	ua := cfg.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	withAuth := func(base http.RoundTripper) *http.Client {
		at := &authTransport{base: base, userAgent: ua, user: cfg.Username, password: cfg.Password}
		if cfg.BearerToken != "" || cfg.BearerTokenFile != "" {
			at.token = &tokenSource{static: cfg.BearerToken, file: cfg.BearerTokenFile}
		}
		return &http.Client{Transport: at}
	}
	if cfg.Transport != nil {
		return withAuth(cfg.Transport), nil
	}
	tlsCfg, err := buildTLS(cfg.TLS)
	if err != nil {
		return nil, fmt.Errorf("rest config: TLS: %w", err)
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.TLSClientConfig = tlsCfg
	base.MaxIdleConnsPerHost = 25 // HTTP/1.1 only: HTTP/2 shares one connection
	// HTTP/2 when the server offers it (ALPN), so concurrent requests and
	// watches share one connection; a custom TLS configuration turns Go's
	// automatic HTTP/2 off unless this is set.
	base.ForceAttemptHTTP2 = true
	// A connection silent for 30 s is pinged and closed when the ping gets no
	// answer in 15 s, so that the streams multiplexed on a dead connection
	// (watches, mostly) fail and are re-opened instead of hanging (client-go's
	// values).
	base.HTTP2 = &http.HTTP2Config{SendPingTimeout: 30 * time.Second, PingTimeout: 15 * time.Second}
	return withAuth(&firstConn{base: base}), nil
}
