package h2serve_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"

	"github.com/converge-dev/converge/framework/apiserver/h2serve"
)

// selfSigned is a serving certificate for 127.0.0.1 and the pool trusting it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage:    x509.KeyUsageDigitalSignature, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// testServer is a TLS server of h: HTTP/2 by h2serve, or by Go's server
// when goServer.
type testServer struct {
	addr string
	pool *x509.CertPool
	srv  *http.Server
}

func serve(t testing.TB, h http.Handler, goServer bool, cfg h2serve.Config) *testServer {
	t.Helper()
	cert, pool := selfSigned(t)
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
