package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultDialTimeout bounds connecting to an external cluster.
const DefaultDialTimeout = 10 * time.Second

// ExternalOptions locate an external etcd cluster.
type ExternalOptions struct {
	// Endpoints are the client URLs of the members (required).
	Endpoints []string
	// CAFile verifies the members' certificates; with it (or a client
	// certificate) the connection uses TLS.
	CAFile string
	// CertFile and KeyFile are the client certificate and key, both or neither.
	CertFile, KeyFile string
	// DialTimeout bounds connecting and the connectivity check;
	// DefaultDialTimeout when 0.
	DialTimeout time.Duration
}

func (o ExternalOptions) validate() error {
	var errs []error
	if len(o.Endpoints) == 0 {
		errs = append(errs, errors.New("no endpoints"))
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		errs = append(errs, errors.New("cert file and key file must be given together"))
	}
	if o.DialTimeout < 0 {
		errs = append(errs, fmt.Errorf("dial timeout %s is negative", o.DialTimeout))
	}
	return errors.Join(errs...)
}

// Connect returns a client for an external etcd cluster after checking that it
// answers a read within the dial timeout. The caller closes the client.
func Connect(ctx context.Context, opts ExternalOptions) (*clientv3.Client, error) {
	where := strings.Join(opts.Endpoints, ",")
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("connect to etcd %s: invalid options: %w", where, err)
	}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = DefaultDialTimeout
	}
	tlsCfg, err := tlsConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("connect to etcd %s: %w", where, err)
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:            opts.Endpoints,
		DialTimeout:          opts.DialTimeout,
		DialKeepAliveTime:    30 * time.Second,
		DialKeepAliveTimeout: 10 * time.Second,
		TLS:                  tlsCfg,
		Logger:               quietClientLogger(),
	})
	if err != nil {
		return nil, fmt.Errorf("connect to etcd %s: %w", where, err)
	}
	cctx, cancel := context.WithTimeout(ctx, opts.DialTimeout)
	defer cancel()
	if _, err := client.Get(cctx, revisionProbeKey, clientv3.WithCountOnly()); err != nil {
		client.Close()
		return nil, fmt.Errorf("connect to etcd %s: no answer: %w", where, err)
	}
	return client, nil
}

// tlsConfig builds the client TLS configuration, nil when no file is given.
func tlsConfig(opts ExternalOptions) (*tls.Config, error) {
	if opts.CAFile == "" && opts.CertFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", opts.CAFile)
		}
		cfg.RootCAs = pool
	}
	if opts.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("load client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
