// Package pki creates and maintains the control plane's certificates in a
// directory: a CA (ca.crt, ca.key), the API server's serving certificate
// (apiserver.crt/.key; SANs localhost, 127.0.0.1, ::1, the host name, the
// in-cluster kubernetes service names and any extra SANs) and an admin client
// certificate (admin.crt/.key; CN converge-admin, O system:masters). Ensure
// creates what is missing and reuses what is there; Rotate renews leaf
// certificates that are close to expiry (the CA is kept). Keys are ECDSA P-256,
// written 0600.
//
// The serving certificate is read through ServerTLSConfig's GetCertificate, so a
// rotation takes effect for new connections without a restart.
package pki

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/framework/certutil"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
)

// File names inside the PKI directory.
const (
	CACertFile      = "ca.crt"
	CAKeyFile       = "ca.key"
	ServingCertFile = "apiserver.crt"
	ServingKeyFile  = "apiserver.key"
	AdminCertFile   = "admin.crt"
	AdminKeyFile    = "admin.key"
	// ServiceAccountKeyFile signs ServiceAccount tokens (never rotated: tokens
	// would stop verifying).
	ServiceAccountKeyFile = "sa.key"
)

// Admin identity of the admin client certificate.
const (
	AdminUser  = "converge-admin"
	AdminGroup = "system:masters"
)

// Options configure Ensure. The zero value of each field means its default.
type Options struct {
	// Dir holds the files. Required.
	Dir string
	// ServingDir holds the serving certificate and key instead of Dir, so that
	// API servers sharing one Dir (its CA, ServiceAccount key and admin
	// certificate) each serve a certificate with their own names.
	ServingDir string
	// ExtraSANs are added to the serving certificate (IPs or DNS names).
	ExtraSANs []string
	// CAValidity (default 10 years) and LeafValidity (default 1 year).
	CAValidity, LeafValidity time.Duration
	// RenewBefore is how long before expiry Rotate renews a leaf (default a third
	// of LeafValidity).
	RenewBefore time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// PKI is the loaded set of certificates.
type PKI struct {
	opts Options

	mu                        sync.RWMutex // guards the fields below
	ca                        *x509.Certificate
	caKey                     crypto.Signer
	caPEM                     []byte
	serving                   *tls.Certificate
	admin                     *tls.Certificate
	adminCertPEM, adminKeyPEM []byte
	saKey                     *ecdsa.PrivateKey
}

// prepare fills in the defaults of opts and creates opts.Dir.
func (opts Options) prepare() (Options, error) {
	opts, err := opts.defaults()
	if err != nil {
		return opts, err
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return opts, fmt.Errorf("pki: %w", err)
	}
	return opts, nil
}

// defaults fills the zero fields of opts; it touches no file.
func (opts Options) defaults() (Options, error) {
	if opts.Dir == "" {
		return opts, errors.New("pki: Dir is required")
	}
	if opts.CAValidity == 0 {
		opts.CAValidity = 10 * 365 * 24 * time.Hour
	}
	if opts.LeafValidity == 0 {
		opts.LeafValidity = 365 * 24 * time.Hour
	}
	if opts.RenewBefore == 0 {
		opts.RenewBefore = opts.LeafValidity / 3
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return opts, nil
}

// Ensure loads the certificates in opts.Dir, creating whatever is missing (and
// re-issuing a serving certificate that lacks a wanted SAN).
func Ensure(opts Options) (*PKI, error) {
	opts, err := opts.prepare()
	if err != nil {
		return nil, err
	}
	if opts.ServingDir != "" {
		if err := os.MkdirAll(opts.ServingDir, 0o700); err != nil {
			return nil, fmt.Errorf("pki: %w", err)
		}
	}
	p := &PKI{opts: opts}
	if err := p.loadOrCreateCA(); err != nil {
		return nil, err
	}
	if err := p.loadOrCreateSAKey(); err != nil {
		return nil, err
	}
	if _, err := p.Rotate(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *PKI) loadOrCreateSAKey() error {
	b, err := os.ReadFile(p.path(ServiceAccountKeyFile))
	if err == nil {
		blk, _ := pem.Decode(b)
		if blk == nil {
			return errors.New("pki: sa.key holds no PEM block")
		}
		k, err := x509.ParseECPrivateKey(blk.Bytes)
		if err != nil {
			return fmt.Errorf("pki: load sa.key: %w", err)
		}
		p.saKey = k
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("pki: load sa.key: %w", err)
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("pki: generate sa.key: %w", err)
	}
	pemKey, err := certutil.EncodeECKey(k)
	if err != nil {
		return err
	}
	if err := certutil.WriteFileAtomic(p.path(ServiceAccountKeyFile), pemKey, 0o600); err != nil {
		return err
	}
	p.saKey = k
	return nil
}

// ServiceAccountKey signs ServiceAccount tokens.
func (p *PKI) ServiceAccountKey() *ecdsa.PrivateKey { return p.saKey }

func (p *PKI) path(name string) string {
	if p.opts.ServingDir != "" && (name == ServingCertFile || name == ServingKeyFile) {
		return filepath.Join(p.opts.ServingDir, name)
	}
	return filepath.Join(p.opts.Dir, name)
}

func (p *PKI) loadOrCreateCA() error {
	certPEM, err1 := os.ReadFile(p.path(CACertFile))
	keyPEM, err2 := os.ReadFile(p.path(CAKeyFile))
	if err1 == nil && err2 == nil {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return fmt.Errorf("pki: load CA: %w", err)
		}
		p.ca, p.caKey, p.caPEM = pair.Leaf, pair.PrivateKey.(crypto.Signer), certPEM
		return nil
	}
	if !errors.Is(err1, os.ErrNotExist) && err1 != nil {
		return fmt.Errorf("pki: load CA: %w", err1)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("pki: generate CA key: %w", err)
	}
	now := p.opts.Now()
	tmpl := &x509.Certificate{
		SerialNumber: certutil.NewSerial(), Subject: pkix.Name{CommonName: "converge-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(p.opts.CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return fmt.Errorf("pki: create CA: %w", err)
	}
	cert, _ := x509.ParseCertificate(der)
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if keyPEM, err = certutil.EncodeECKey(key); err != nil {
		return err
	}
	if err := certutil.WriteFileAtomic(p.path(CAKeyFile), keyPEM, 0o600); err != nil {
		return err
	}
	if err := certutil.WriteFileAtomic(p.path(CACertFile), certPEM, 0o644); err != nil {
		return err
	}
	p.ca, p.caKey, p.caPEM = cert, key, certPEM
	return nil
}

// ServingSANs returns the names the serving certificate must carry.
func (p *PKI) ServingSANs() (dns []string, ips []net.IP) {
	dns = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	if h, err := os.Hostname(); err == nil && h != "" && !slices.Contains(dns, h) {
		dns = append(dns, h)
	}
	ips = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	for _, s := range p.opts.ExtraSANs {
		if ip := net.ParseIP(s); ip != nil {
			if !slices.ContainsFunc(ips, ip.Equal) {
				ips = append(ips, ip)
			}
		} else if s != "" && !slices.Contains(dns, s) {
			dns = append(dns, s)
		}
	}
	return dns, ips
}

// Rotate (re)issues every leaf certificate that is missing, unreadable, not
// signed by the CA, expiring within RenewBefore, or (serving) missing a SAN. It
// reports whether anything was renewed. Safe to call periodically.
func (p *PKI) Rotate() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.opts.Now()
	dns, ips := p.ServingSANs()
	renewed := false

	serving, _, _, err := p.loadLeaf(ServingCertFile, ServingKeyFile, now)
	if err == nil && !hasSANs(serving.Leaf, dns, ips) {
		err = errors.New("missing SANs")
	}
	if err != nil {
		tmpl := &x509.Certificate{
			Subject: pkix.Name{CommonName: "converge-apiserver"}, DNSNames: dns, IPAddresses: ips,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		if serving, _, _, err = p.issue(tmpl, ServingCertFile, ServingKeyFile, now); err != nil {
			return false, err
		}
		renewed = true
	}
	admin, certPEM, keyPEM, err := p.loadLeaf(AdminCertFile, AdminKeyFile, now)
	if err != nil {
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: AdminUser, Organization: []string{AdminGroup}},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		if admin, certPEM, keyPEM, err = p.issue(tmpl, AdminCertFile, AdminKeyFile, now); err != nil {
			return false, err
		}
		renewed = true
	}
	p.serving, p.admin, p.adminCertPEM, p.adminKeyPEM = serving, admin, certPEM, keyPEM
	return renewed, nil
}

func hasSANs(c *x509.Certificate, dns []string, ips []net.IP) bool {
	for _, d := range dns {
		if !slices.Contains(c.DNSNames, d) {
			return false
		}
	}
	for _, ip := range ips {
		if !slices.ContainsFunc(c.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}

// loadLeaf reads a leaf pair; an error means it must be (re)issued.
func (p *PKI) loadLeaf(certFile, keyFile string, now time.Time) (*tls.Certificate, []byte, []byte, error) {
	certPEM, err := os.ReadFile(p.path(certFile))
	if err != nil {
		return nil, nil, nil, err
	}
	keyPEM, err := os.ReadFile(p.path(keyFile))
	if err != nil {
		return nil, nil, nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := pair.Leaf.CheckSignatureFrom(p.ca); err != nil {
		return nil, nil, nil, err
	}
	if now.Add(p.opts.RenewBefore).After(pair.Leaf.NotAfter) {
		return nil, nil, nil, errors.New("expiring")
	}
	return &pair, certPEM, keyPEM, nil
}

func (p *PKI) issue(tmpl *x509.Certificate, certFile, keyFile string, now time.Time) (*tls.Certificate, []byte, []byte, error) {
	certPEM, keyPEM, err := p.sign(tmpl, now, p.opts.LeafValidity)
	if err != nil {
		return nil, nil, nil, err
	}
	if certFile != "" {
		if err := certutil.WriteFileAtomic(p.path(keyFile), keyPEM, 0o600); err != nil {
			return nil, nil, nil, err
		}
		if err := certutil.WriteFileAtomic(p.path(certFile), certPEM, 0o644); err != nil {
			return nil, nil, nil, err
		}
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("pki: %w", err)
	}
	return &pair, certPEM, keyPEM, nil
}

func (p *PKI) sign(tmpl *x509.Certificate, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: generate key: %w", err)
	}
	tmpl.SerialNumber = certutil.NewSerial()
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-5*time.Minute), now.Add(validity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, key.Public(), p.caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: sign %s: %w", tmpl.Subject.CommonName, err)
	}
	keyPEM, err = certutil.EncodeECKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

// IssueClientCert signs a client certificate for user (CN) in groups (O), valid
// for validity (default LeafValidity). Nothing is written to disk.
func (p *PKI) IssueClientCert(user string, groups []string, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if validity == 0 {
		validity = p.opts.LeafValidity
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, p.opts.Now(), validity)
}

// CAPEM is the CA certificate.
func (p *PKI) CAPEM() []byte { return bytes.Clone(p.caPEM) }

// CAPool is a pool holding the CA (client certificate roots).
func (p *PKI) CAPool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	return pool
}

// AdminCredentials are the admin client certificate and key (PEM).
func (p *PKI) AdminCredentials() (certPEM, keyPEM []byte) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return bytes.Clone(p.adminCertPEM), bytes.Clone(p.adminKeyPEM)
}

// ServingCertificate is the current serving certificate.
func (p *PKI) ServingCertificate() *tls.Certificate {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.serving
}

// ServerTLSConfig serves the current serving certificate and verifies client
// certificates against the CA when clients present one (requests without one
// go on to token authentication or get 401).
func (p *PKI) ServerTLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return p.ServingCertificate(), nil
		},
		ClientAuth: tls.VerifyClientCertIfGiven,
		ClientCAs:  p.CAPool(),
	}
}

// RunRotation calls Rotate every interval (default 1 hour) until ctx ends,
// telling onError (may be nil) about failures. It blocks.
func (p *PKI) RunRotation(ctx context.Context, interval time.Duration, onError func(error)) {
	if interval <= 0 {
		interval = time.Hour
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := p.Rotate(); err != nil && onError != nil {
				onError(err)
			}
		}
	}
}

// WriteAdminKubeconfig writes a kubeconfig for server (https://...) that trusts
// the CA and authenticates with the admin certificate, all as base64 data.
func (p *PKI) WriteAdminKubeconfig(path, server, name string) error {
	cert, key := p.AdminCredentials()
	return WriteKubeconfig(path, server, name, p.caPEM, cert, key, "")
}

// WriteKubeconfig writes a kubeconfig with one cluster, user and context named
// name: the CA as certificate-authority-data, the client certificate and key as
// client-certificate-data/client-key-data (when set) and token (when set).
func WriteKubeconfig(path, server, name string, caPEM, certPEM, keyPEM []byte, token string) error {
	enc := base64.StdEncoding.EncodeToString
	f := kubeconfig.File{
		CurrentContext: name,
		Clusters:       []kubeconfig.NamedCluster{{Name: name, Cluster: kubeconfig.Cluster{Server: server}}},
		Users:          []kubeconfig.NamedUser{{Name: name + "-admin", User: kubeconfig.AuthInfo{Token: token}}},
		Contexts:       []kubeconfig.NamedContext{{Name: name, Context: kubeconfig.Context{Cluster: name, User: name + "-admin", Namespace: "default"}}},
	}
	if len(caPEM) > 0 {
		f.Clusters[0].Cluster.CertificateAuthorityData = enc(caPEM)
	}
	if len(certPEM) > 0 {
		f.Users[0].User.ClientCertificateData = enc(certPEM)
		f.Users[0].User.ClientKeyData = enc(keyPEM)
	}
	body, err := yaml.Marshal(struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		kubeconfig.File
		Preferences struct{} `json:"preferences"`
	}{APIVersion: "v1", Kind: "Config", File: f})
	if err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return certutil.WriteFileAtomic(path, body, 0o600)
}
