package h2serve_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"

	"github.com/converge-dev/converge/framework/apiserver/h2serve"
	"github.com/converge-dev/converge/framework/certutil/certtest"
)

// testServer is a TLS server of h: HTTP/2 by h2serve, or by Go's server
// when goServer.
type testServer struct {
	addr string
	pool *x509.CertPool
	srv  *http.Server
}

func serve(t testing.TB, h http.Handler, goServer bool, cfg h2serve.Config) *testServer {
	t.Helper()
	cert, pool := certtest.SelfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	srv.ErrorLog = log.New(io.Discard, "", 0)
	if !goServer {
		if cfg.Logger.GetSink() == nil {
			if tt, ok := t.(*testing.T); ok {
				cfg.Logger = testr.NewWithOptions(tt, testr.Options{Verbosity: 1})
			} else {
				cfg.Logger = logr.Discard()
			}
		}
		h2serve.New(cfg).Attach(srv)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return &testServer{addr: ln.Addr().String(), pool: pool, srv: srv}
}

// client is an HTTP/2 client of s.
func (s *testServer) client() *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: s.pool},
		ForceAttemptHTTP2: true,
	}}
}

func (s *testServer) url(path string) string { return "https://" + s.addr + path }
