package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/operators"
)

// Defaults of Options.
const (
	DefaultBindAddress    = "127.0.0.1:0"
	DefaultCertValidity   = 7 * 24 * time.Hour
	DefaultResyncInterval = time.Minute
)

// Options configure a webhook Server. The zero value of each field but Issuer
// means its default.
type Options struct {
	// Issuer signs the serving certificate; its CA becomes the caBundle.
	// Required.
	Issuer Issuer
	// BindAddress is where the HTTPS server listens (default 127.0.0.1:0, a
	// free loopback port: right for operators inside `converge up`).
	BindAddress string
	// Host is the host name or IP address the API server dials: the host of
	// the registered URLs and the certificate's subject alternative name
	// (default: the bound IP, or 127.0.0.1 when binding every address).
	Host string
	// CertValidity is the validity of each serving certificate (default 7
	// days); it is renewed RenewBefore its expiry (default a third of
	// CertValidity).
	CertValidity, RenewBefore time.Duration
	// ResyncInterval is how often the certificate's expiry, the CA and the
	// registrations are checked besides watching the registered objects
	// (default 1 minute).
	ResyncInterval time.Duration
	// Logger receives progress and errors.
	Logger logr.Logger
}

func (o *Options) complete() error {
	if o.Issuer == nil {
		return errors.New("webhook: Options.Issuer is required")
	}
	if o.BindAddress == "" {
		o.BindAddress = DefaultBindAddress
	}
	if o.CertValidity <= 0 {
		o.CertValidity = DefaultCertValidity
	}
	if o.RenewBefore <= 0 || o.RenewBefore >= o.CertValidity {
		o.RenewBefore = o.CertValidity / 3
	}
	if o.ResyncInterval <= 0 {
		o.ResyncInterval = DefaultResyncInterval
	}
	return nil
}

// Server serves one operator's webhooks over HTTPS and keeps their
// registrations (see Register and Keep) current.
type Server struct {
	opts     Options
	operator string
	hooks    []operators.Webhook
	log      logr.Logger

	ln   net.Listener
	host string
	port int

	cert   atomic.Pointer[tls.Certificate]
	certMu sync.Mutex // serializes Rotate
	caPEM  atomic.Pointer[[]byte]

	kick chan struct{}
}

// NewServer checks hooks, listens on opts.BindAddress and issues the first
// serving certificate. Serve serves; Register and Keep register.
func NewServer(operator string, hooks []operators.Webhook, opts Options) (*Server, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	if err := checkHooks(operator, hooks); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, operator: operator, hooks: hooks, log: opts.Logger, kick: make(chan struct{}, 1)}
	ln, err := net.Listen("tcp", opts.BindAddress)
	if err != nil {
		return nil, fmt.Errorf("webhook server of %s: listen on %s: %w", operator, opts.BindAddress, err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	s.ln, s.port, s.host = ln, addr.Port, opts.Host
	if s.host == "" {
		s.host = "127.0.0.1"
		if !addr.IP.IsUnspecified() {
			s.host = addr.IP.String()
		}
	}
	if err := s.Rotate(); err != nil {
		_ = ln.Close()
		return nil, err
	}
	return s, nil
}

// checkHooks validates an operator's webhook declarations.
func checkHooks(operator string, hooks []operators.Webhook) error {
	paths := map[string]bool{}
	var errs []error
	for i, h := range hooks {
		what := fmt.Sprintf("operator %s: webhook %d (%s %s)", operator, i, h.Type, h.Path)
		if !strings.HasPrefix(h.Path, "/") {
			errs = append(errs, fmt.Errorf("%s: path must start with /", what))
		}
		if paths[h.Path] {
			errs = append(errs, fmt.Errorf("%s: path is used twice", what))
		}
		paths[h.Path] = true
		if h.Handler == nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, errNoHandler))
		}
		switch h.Type {
		case operators.Mutating, operators.Validating:
			if len(h.Rules) == 0 {
				errs = append(errs, fmt.Errorf("%s: admission webhooks need at least one rule", what))
			}
			if n := hookName(operator, h); strings.Count(n, ".") < 2 {
				errs = append(errs, fmt.Errorf("%s: name %q must have at least three DNS labels", what, n))
			}
		case operators.Conversion:
			if h.CRD == "" {
				errs = append(errs, fmt.Errorf("%s: conversion webhooks need the CRD name", what))
			}
		default:
			errs = append(errs, fmt.Errorf("%s: unknown type %q", what, h.Type))
		}
	}
	return errors.Join(errs...)
}

// hookName is the webhook's name in its configuration.
func hookName(operator string, h operators.Webhook) string {
	if h.Name != "" {
		return h.Name
	}
	p := strings.Trim(strings.ReplaceAll(h.Path, "/", "-"), "-")
	if p == "" {
		p = "webhook"
	}
	return strings.ToLower(p) + "." + operator + ".operators.converge.dev"
}

// URL is the base URL the API server calls (https://HOST:PORT).
func (s *Server) URL() string { return "https://" + net.JoinHostPort(s.host, strconv.Itoa(s.port)) }

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Certificate is the serving certificate in use.
func (s *Server) Certificate() *tls.Certificate { return s.cert.Load() }

// CABundle is the CA certificate (PEM) the current serving certificate was
// issued by: the caBundle Register injects.
func (s *Server) CABundle() []byte {
	if p := s.caPEM.Load(); p != nil {
		return bytes.Clone(*p)
	}
	return nil
}

// Rotate issues a new serving certificate and serves it from the next TLS
// handshake on (no restart; open connections keep the old one).
func (s *Server) Rotate() error {
	s.certMu.Lock()
	defer s.certMu.Unlock()
	ca := s.opts.Issuer.CAPEM()
	hosts := []string{s.host}
	if ip := net.ParseIP(s.host); ip != nil && ip.IsLoopback() {
		hosts = append(hosts, "localhost")
	}
	certPEM, keyPEM, err := s.opts.Issuer.IssueServingCert(hosts, s.opts.CertValidity)
	if err != nil {
		return fmt.Errorf("webhook server of %s: issue serving certificate: %w", s.operator, err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("webhook server of %s: load serving certificate: %w", s.operator, err)
	}
	s.cert.Store(&pair)
	s.caPEM.Store(&ca)
	s.log.V(1).Info("Issued webhook serving certificate", "hosts", hosts, "notAfter", pair.Leaf.NotAfter)
	return nil
}

// needsRotation reports whether the certificate expires within RenewBefore or
// the issuer's CA changed.
func (s *Server) needsRotation(now time.Time) bool {
	c := s.cert.Load()
	if c == nil || c.Leaf == nil || now.Add(s.opts.RenewBefore).After(c.Leaf.NotAfter) {
		return true
	}
	return !bytes.Equal(s.CABundle(), s.opts.Issuer.CAPEM())
}

// Handler routes each webhook's path to its handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, h := range s.hooks {
		mux.Handle(h.Path, h.Handler)
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	return mux
}

// Serve serves HTTPS until ctx ends, then shuts down (in-flight requests get a
// few seconds) and returns nil.
func (s *Server) Serve(ctx context.Context) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	tlsLn := tls.NewListener(s.ln, &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return s.cert.Load(), nil },
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
	}()
	s.log.Info("Serving webhooks", "url", s.URL(), "webhooks", len(s.hooks))
	err := srv.Serve(tlsLn)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return fmt.Errorf("webhook server of %s: %w", s.operator, err)
}
