package bootstrap

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/api/all"
	certificatesv1 "github.com/converge-dev/converge/builtin/api/certificates/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/rest"
)

// CACertHash is the pin of a CA certificate: "sha256:" and the hex SHA-256 of
// its DER SubjectPublicKeyInfo (kubeadm's --discovery-token-ca-cert-hash).
func CACertHash(caPEM []byte) (string, error) {
	block, _ := pem.Decode(caPEM)
	if block == nil {
		return "", errors.New("no PEM certificate")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("parse CA certificate: %w", err)
	}
	return hashOf(c), nil
}

func hashOf(c *x509.Certificate) string {
	sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// DiscoverCA connects to server, finds in the certificate chain it presents
// the CA whose public key matches hash, checks that the server's certificate
// is valid for the host under that CA, and returns the CA as PEM. The server
// must send its CA in the chain (converge's API server does).
func DiscoverCA(ctx context.Context, server, hash string) ([]byte, error) {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" || u.Scheme != "https" {
		return nil, fmt.Errorf("discover CA: server %q must be an https:// URL", server)
	}
	hash = strings.ToLower(strings.TrimSpace(hash))
	if !strings.HasPrefix(hash, "sha256:") {
		return nil, fmt.Errorf("discover CA: hash %q must start with sha256:", hash)
	}
	host := u.Hostname()
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(host, "443")
	}
	var chain []*x509.Certificate
	d := tls.Dialer{Config: &tls.Config{
		// The chain is verified below against the pinned CA.
		InsecureSkipVerify: true, //nolint:gosec
		MinVersion:         tls.VersionTLS12,
		VerifyConnection: func(cs tls.ConnectionState) error {
			chain = cs.PeerCertificates
			return nil
		},
	}}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("discover CA: connect to %s: %w", addr, err)
	}
	_ = conn.Close()
	if len(chain) == 0 {
		return nil, fmt.Errorf("discover CA: %s presented no certificate", addr)
	}
	var ca *x509.Certificate
	for _, c := range chain {
		if c.IsCA && hashOf(c) == hash {
			ca = c
		}
	}
	if ca == nil {
		return nil, fmt.Errorf("discover CA: no CA certificate with public key hash %s in the chain %s presented", hash, addr)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	if _, err := chain[0].Verify(x509.VerifyOptions{DNSName: host, Roots: pool, Intermediates: inter}); err != nil {
		return nil, fmt.Errorf("discover CA: the serving certificate of %s does not verify with the pinned CA: %w", addr, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), nil
}

// JoinOptions configure Join.
type JoinOptions struct {
	// Server is the API server's https:// URL.
	Server string
	// Token is the bootstrap token.
	Token string
	// CAPEM is the cluster CA; when empty, CACertHash finds it (DiscoverCA).
	CAPEM      []byte
	CACertHash string
	// NodeName is the node the certificate is for.
	NodeName string
	// Timeout bounds the wait for approval and signing (default 2 min).
	Timeout time.Duration
	// PollInterval is how often the request is read (default 500 ms).
	PollInterval time.Duration
	Logger       logr.Logger
}

// Credentials are what Join obtained.
type Credentials struct {
	CAPEM, CertPEM, KeyPEM []byte
}

// Config is a client configuration with these credentials.
func (c *Credentials) Config(server string) *client.Config {
	return &client.Config{Host: server, TLS: rest.TLSConfig{CAData: c.CAPEM, CertData: c.CertPEM, KeyData: c.KeyPEM}}
}

// Join obtains a node client certificate (system:node:NAME in system:nodes)
// with a bootstrap token: it creates a CertificateSigningRequest for
// kubernetes.io/kube-apiserver-client-kubelet and waits until it is signed.
func Join(ctx context.Context, opts JoinOptions) (*Credentials, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 500 * time.Millisecond
	}
	if opts.NodeName == "" {
		return nil, errors.New("join: NodeName is required")
	}
	if _, _, err := Parse(opts.Token); err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	caPEM := opts.CAPEM
	if len(caPEM) == 0 {
		if opts.CACertHash == "" {
			return nil, errors.New("join: the CA certificate or its hash (--ca-cert-hash) is required")
		}
		var err error
		if caPEM, err = DiscoverCA(ctx, opts.Server, opts.CACertHash); err != nil {
			return nil, fmt.Errorf("join: %w", err)
		}
	}
	sch, err := all.NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(&client.Config{Host: opts.Server, BearerToken: opts.Token, TLS: rest.TLSConfig{CAData: caPEM}, UserAgent: "converge-node-bootstrap"},
		client.Options{Scheme: sch})
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("join: generate key: %w", err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:" + opts.NodeName, Organization: []string{"system:nodes"}},
	}, key)
	if err != nil {
		return nil, fmt.Errorf("join: create certificate request: %w", err)
	}
	suffix, err := random(8)
	if err != nil {
		return nil, err
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: api.ObjectMeta{Name: "node-csr-" + opts.NodeName + "-" + suffix},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	if err := c.Create(ctx, csr); err != nil {
		return nil, fmt.Errorf("join: create CertificateSigningRequest: %w", err)
	}
	opts.Logger.Info("Waiting for the node certificate", "csr", csr.Name)
	wctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	for {
		got := &certificatesv1.CertificateSigningRequest{}
		if err := c.Get(wctx, client.ObjectKey{Name: csr.Name}, got); err != nil && wctx.Err() == nil {
			opts.Logger.V(1).Info("Reading the CertificateSigningRequest failed; retrying", "error", err.Error())
		} else if err == nil {
			if d := got.Condition(certificatesv1.CertificateDenied); d != nil {
				return nil, fmt.Errorf("join: certificate request %s denied: %s %s", csr.Name, d.Reason, d.Message)
			}
			if f := got.Condition(certificatesv1.CertificateFailed); f != nil {
				return nil, fmt.Errorf("join: certificate request %s failed: %s %s", csr.Name, f.Reason, f.Message)
			}
			if len(got.Status.Certificate) > 0 {
				keyDER, err := x509.MarshalECPrivateKey(key)
				if err != nil {
					return nil, fmt.Errorf("join: encode key: %w", err)
				}
				return &Credentials{CAPEM: caPEM, CertPEM: got.Status.Certificate,
					KeyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})}, nil
			}
		}
		select {
		case <-wctx.Done():
			return nil, fmt.Errorf("join: certificate request %s was not signed within %s (is the control plane running its CSR approver and signer, i.e. secure, not --insecure, with controllers?)", csr.Name, opts.Timeout)
		case <-time.After(opts.PollInterval):
		}
	}
}
