package webhook

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/converge-dev/converge/framework/certutil"
)

// Issuer signs webhook serving certificates. The control plane's CA
// (builtin/security/pki.PKI, the CA of `converge up`, secure or --insecure)
// is one; a standalone operator uses its own (SelfSignedCA).
type Issuer interface {
	// IssueServingCert signs a serving certificate for hosts (DNS names and
	// IPs), valid for validity, and returns it with its key (PEM).
	IssueServingCert(hosts []string, validity time.Duration) (certPEM, keyPEM []byte, err error)
	// CAPEM is the CA certificate the API server must trust: it becomes the
	// caBundle of the webhook configurations and CRD conversion settings.
	CAPEM() []byte
}

// File names of SelfSignedCA in its directory.
const (
	CACertFile = "webhook-ca.crt"
	CAKeyFile  = "webhook-ca.key"
)

// CA is a certificate authority kept in a directory: the Issuer of a
// standalone operator, which has no control plane CA to ask.
type CA struct {
	mu     sync.Mutex
	cert   *x509.Certificate
	key    crypto.Signer
	certPM []byte
}

var _ Issuer = (*CA)(nil)

// SelfSignedCA loads the CA in dir (webhook-ca.crt, webhook-ca.key), creating
// it (ECDSA P-256, valid 10 years, key 0600) when missing. Replicas of one
// operator must share dir (a volume, or a Secret mounted there) so that they
// serve certificates of the same CA.
func SelfSignedCA(dir, commonName string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	certPEM, err1 := os.ReadFile(certPath)
	keyPEM, err2 := os.ReadFile(keyPath)
	if err1 == nil && err2 == nil {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("load webhook CA from %s: %w", dir, err)
		}
		return &CA{cert: pair.Leaf, key: pair.PrivateKey.(crypto.Signer), certPM: certPEM}, nil
	}
	for _, err := range []error{err1, err2} {
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("load webhook CA from %s: %w", dir, err)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create webhook CA directory: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate webhook CA key: %w", err)
	}
	if commonName == "" {
		commonName = "webhook-ca"
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: certutil.NewSerial(), Subject: pkix.Name{CommonName: commonName},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("create webhook CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("create webhook CA: %w", err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if keyPEM, err = certutil.EncodeECKey(key); err != nil {
		return nil, err
	}
	if err := certutil.WriteFileAtomic(keyPath, keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := certutil.WriteFileAtomic(certPath, certPEM, 0o644); err != nil {
		return nil, err
	}
	return &CA{cert: cert, key: key, certPM: certPEM}, nil
}

// CAPEM implements Issuer.
func (c *CA) CAPEM() []byte { return bytes.Clone(c.certPM) }

// IssueServingCert implements Issuer.
func (c *CA) IssueServingCert(hosts []string, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New("a serving certificate needs at least one host")
	}
	if validity <= 0 {
		validity = DefaultCertValidity
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: certutil.NewSerial(), Subject: pkix.Name{CommonName: hosts[0]},
		NotBefore: now.Add(-5 * time.Minute), NotAfter: now.Add(validity),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, key.Public(), c.key)
	if err != nil {
		return nil, nil, fmt.Errorf("sign serving certificate: %w", err)
	}
	if keyPEM, err = certutil.EncodeECKey(key); err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}
