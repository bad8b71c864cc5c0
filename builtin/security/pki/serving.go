package pki

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net"
	"time"
)

// EnsureCA loads the CA in opts.Dir, creating it when missing, and nothing
// else (no leaf certificates, no ServiceAccount key). An insecure control
// plane (converge up --insecure, testenv) keeps this CA for the serving certificates of operator webhooks; a
// secure one uses the PKI of Ensure, whose CA is the same files.
func EnsureCA(opts Options) (*PKI, error) {
	opts, err := opts.prepare()
	if err != nil {
		return nil, err
	}
	p := &PKI{opts: opts}
	if err := p.loadOrCreateCA(); err != nil {
		return nil, err
	}
	return p, nil
}

// IssueServingCert signs a serving certificate for hosts (DNS names and IP
// addresses; the first one is also the common name), valid for validity
// (default LeafValidity). Nothing is written to disk: the caller keeps the pair
// in memory and asks again before it expires. It is the certificate issuer of
// the operator SDK's webhook servers (operators/webhook.Issuer, with CAPEM).
func (p *PKI) IssueServingCert(hosts []string, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New("pki: a serving certificate needs at least one host")
	}
	if validity == 0 {
		validity = p.opts.LeafValidity
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: hosts[0]},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.sign(tmpl, p.opts.Now(), validity)
}
