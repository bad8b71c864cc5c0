package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/converge-dev/converge/framework/certutil"
)

// NodeClientUser is the user the API server authenticates as to node agents'
// log servers (kubeadm's kube-apiserver-kubelet-client).
const NodeClientUser = "kube-apiserver-kubelet-client"

// NodeClientTLS is the client side of the API server's calls to node agents
// (pods/log): a certificate for NodeClientUser in system:masters, re-issued
// when a third of its life is left. Node agents serve self-signed
// certificates, so theirs is not verified (kube-apiserver without
// --kubelet-certificate-authority does the same); the agents verify the API
// server's.
func (p *PKI) NodeClientTLS() *tls.Config {
	var (
		mu   sync.Mutex
		cur  *tls.Certificate
		renw time.Time
	)
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, //nolint:gosec // node agents serve self-signed certificates (see above)
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			mu.Lock()
			defer mu.Unlock()
			now := p.opts.Now()
			if cur != nil && now.Before(renw) {
				return cur, nil
			}
			certPEM, keyPEM, err := p.IssueClientCert(NodeClientUser, []string{AdminGroup}, 0)
			if err != nil {
				return nil, err
			}
			pair, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				return nil, fmt.Errorf("pki: node client certificate: %w", err)
			}
			cur = &pair
			renw = now.Add(p.opts.LeafValidity * 2 / 3)
			return cur, nil
		},
	}
}

// NodeLogServerTLS is the serving side of a node agent's log server: a
// self-signed certificate for hosts (IPs or names; valid a year, made anew at
// every start) and client certificates verified against caPEM (the cluster
// CA) when given. Who may do what is decided per request above TLS (package
// builtin/node/nodeauth): NodeClientUser and members of system:masters may
// use every path; other users (by certificate or bearer token) need a
// SubjectAccessReview on nodes/metrics, nodes/stats or nodes/proxy.
func NodeLogServerTLS(caPEM []byte, hosts []string) (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("pki: node log server: no CA certificate")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: generate key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: certutil.NewSerial(), Subject: pkix.Name{CommonName: "converge-node-logs"},
		NotBefore: now.Add(-5 * time.Minute), NotAfter: now.Add(365 * 24 * time.Hour),
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
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("pki: node log server certificate: %w", err)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		ClientCAs:    pool,
		ClientAuth:   tls.VerifyClientCertIfGiven,
	}, nil
}
