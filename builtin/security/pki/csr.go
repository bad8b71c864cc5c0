package pki

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
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
