package pki

import (
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/converge-dev/converge/framework/certutil"
)

// SignRequest signs the public key and subject of a checked certificate
// request with the CA, for the given extended key usages, valid for validity
// (default LeafValidity, never beyond the CA's own expiry). SANs of the request
// are copied. It returns the PEM certificate.
func (p *PKI) SignRequest(csr *x509.CertificateRequest, keyUsage x509.KeyUsage, extUsage []x509.ExtKeyUsage, validity time.Duration) ([]byte, error) {
	if validity <= 0 {
		validity = p.opts.LeafValidity
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	now := p.opts.Now()
	notAfter := now.Add(validity)
	if notAfter.After(p.ca.NotAfter) {
		notAfter = p.ca.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: certutil.NewSerial(), Subject: csr.Subject,
		DNSNames: csr.DNSNames, IPAddresses: csr.IPAddresses, EmailAddresses: csr.EmailAddresses, URIs: csr.URIs,
		NotBefore: now.Add(-5 * time.Minute), NotAfter: notAfter,
		KeyUsage: keyUsage, ExtKeyUsage: extUsage, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, csr.PublicKey, p.caKey)
	if err != nil {
		return nil, fmt.Errorf("pki: sign request of %s: %w", csr.Subject.CommonName, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// LoadCA loads an existing CA from certFile and keyFile (PEM) without
// creating anything: the signer of a controller manager that runs apart from
// the API server (kube-controller-manager's --cluster-signing-cert-file and
// --cluster-signing-key-file). The result signs requests (SignRequest) and
// serves CAPEM; it holds no serving or admin certificates.
func LoadCA(certFile, keyFile string) (*PKI, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("pki: load CA certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("pki: load CA key: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("pki: load CA from %s and %s: %w", certFile, keyFile, err)
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok || !pair.Leaf.IsCA {
		return nil, fmt.Errorf("pki: %s is not a CA certificate with a signing key", certFile)
	}
	opts, err := Options{Dir: filepath.Dir(certFile)}.defaults()
	if err != nil {
		return nil, err
	}
	return &PKI{opts: opts, ca: pair.Leaf, caKey: signer, caPEM: certPEM}, nil
}
