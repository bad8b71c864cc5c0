package pki

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEnsureReusesAndRotates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Now()
	p1, err := Ensure(Options{Dir: dir, ExtraSANs: []string{"10.0.0.1", "api.example.com"}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	leaf := p1.ServingCertificate().Leaf
	for _, name := range []string{"localhost", "api.example.com"} {
		if err := leaf.VerifyHostname(name); err != nil {
			t.Errorf("serving certificate: %v", err)
		}
	}
	for _, ip := range []string{"127.0.0.1", "::1", "10.0.0.1"} {
		if err := leaf.VerifyHostname(ip); err != nil {
			t.Errorf("serving certificate: %v", err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: p1.CAPool(), DNSName: "localhost"}); err != nil {
		t.Errorf("serving certificate not signed by the CA: %v", err)
	}
	cert, _ := p1.AdminCredentials()
	admin, _ := os.ReadFile(filepath.Join(dir, AdminCertFile))
	if !bytes.Equal(cert, admin) {
		t.Error("admin certificate not written")
	}
	if fi, _ := os.Stat(filepath.Join(dir, CAKeyFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("ca.key mode %v", fi.Mode())
	}

	// A second start reuses everything.
	p2, err := Ensure(Options{Dir: dir, ExtraSANs: []string{"10.0.0.1", "api.example.com"}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p1.CAPEM(), p2.CAPEM()) || !p2.ServingCertificate().Leaf.Equal(leaf) {
		t.Error("certificates were not reused")
	}
	// Close to expiry, leaves are renewed and the CA kept.
	later := now.Add(300 * 24 * time.Hour)
	p2.opts.Now = func() time.Time { return later }
	renewed, err := p2.Rotate()
	if err != nil || !renewed {
		t.Fatalf("Rotate: %v, %v", renewed, err)
	}
	if p2.ServingCertificate().Leaf.Equal(leaf) || !bytes.Equal(p1.CAPEM(), p2.CAPEM()) {
		t.Error("want a new serving certificate under the same CA")
	}
	if renewed, _ := p2.Rotate(); renewed {
		t.Error("second Rotate renewed again")
	}
	// A new SAN re-issues the serving certificate.
	p3, err := Ensure(Options{Dir: dir, ExtraSANs: []string{"other.example.com"}, Now: func() time.Time { return later }})
	if err != nil {
		t.Fatal(err)
	}
	if err := p3.ServingCertificate().Leaf.VerifyHostname("other.example.com"); err != nil {
		t.Error(err)
	}
}

func TestWriteAdminKubeconfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p, err := Ensure(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := p.WriteAdminKubeconfig(path, "https://127.0.0.1:6443", "converge"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{"certificate-authority-data:", "client-certificate-data:", "client-key-data:", "server: https://127.0.0.1:6443", "current-context: converge"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("kubeconfig lacks %q:\n%s", want, b)
		}
	}
}

func TestIssueServingCertFromEnsureCA(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, err := EnsureCA(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ServingCertFile)); !os.IsNotExist(err) {
		t.Errorf("EnsureCA wrote a serving certificate (stat: %v)", err)
	}
	tests := []struct {
		hosts, verify []string
		validity      time.Duration
	}{
		{hosts: []string{"127.0.0.1", "localhost"}, verify: []string{"127.0.0.1", "localhost"}},
		{hosts: []string{"webhook.example.svc"}, verify: []string{"webhook.example.svc"}, validity: time.Minute},
	}
	for _, tt := range tests {
		certPEM, keyPEM, err := ca.IssueServingCert(tt.hosts, tt.validity)
		if err != nil {
			t.Fatal(err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range tt.verify {
			if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: ca.CAPool(), DNSName: h}); err != nil {
				t.Errorf("%v: verify %s: %v", tt.hosts, h, err)
			}
		}
		if tt.validity > 0 && pair.Leaf.NotAfter.After(time.Now().Add(tt.validity+time.Minute)) {
			t.Errorf("%v: not after %v, want within %v", tt.hosts, pair.Leaf.NotAfter, tt.validity)
		}
	}
	// The same files back the full PKI: Ensure reuses the CA.
	full, err := Ensure(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(full.CAPEM(), ca.CAPEM()) {
		t.Error("Ensure created another CA")
	}
	if _, _, err := ca.IssueServingCert(nil, 0); err == nil {
		t.Error("no hosts: want an error")
	}
}

// TestSharedDirOwnServingCertificates: API servers sharing Dir share the CA
// and ServiceAccount key but keep their serving certificates (with their own
// names) in their own ServingDir.
func TestSharedDirOwnServingCertificates(t *testing.T) {
	t.Parallel()
	shared := t.TempDir()
	a, err := Ensure(Options{Dir: shared, ServingDir: t.TempDir(), ExtraSANs: []string{"10.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Ensure(Options{Dir: shared, ServingDir: t.TempDir(), ExtraSANs: []string{"10.0.0.2"}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.CAPEM(), b.CAPEM()) || !a.ServiceAccountKey().Equal(b.ServiceAccountKey()) {
		t.Fatal("the CA or the ServiceAccount key is not shared")
	}
	if err := a.ServingCertificate().Leaf.VerifyHostname("10.0.0.1"); err != nil {
		t.Error(err)
	}
	if err := b.ServingCertificate().Leaf.VerifyHostname("10.0.0.2"); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(shared, ServingCertFile)); !os.IsNotExist(err) {
		t.Errorf("a serving certificate was written to the shared directory (stat: %v)", err)
	}
	again, err := Ensure(Options{Dir: shared, ServingDir: filepath.Dir(a.path(ServingCertFile)), ExtraSANs: []string{"10.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.ServingCertificate().Certificate[0], a.ServingCertificate().Certificate[0]) {
		t.Error("the first server's serving certificate was re-issued")
	}
}

// TestNodeLogServerTLS: a node log server accepts client certificates of the
// cluster CA and clients without one (bearer tokens; who may do what is
// decided per request by package nodeauth), and refuses a certificate of
// another CA.
func TestNodeLogServerTLS(t *testing.T) {
	t.Parallel()
	p, err := Ensure(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	srvCfg, err := NodeLogServerTLS(p.CAPEM(), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srvCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				_ = c.(*tls.Conn).Handshake()
				_, _ = c.Write([]byte("ok"))
				c.Close()
			}()
		}
	}()
	dial := func(cfg *tls.Config) error {
		c, err := tls.Dial("tcp", ln.Addr().String(), cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		buf := make([]byte, 2)
		_, err = c.Read(buf) // TLS 1.3 reports a refused client certificate on the first read
		return err
	}
	if err := dial(p.NodeClientTLS()); err != nil {
		t.Errorf("the API server's node client: %v", err)
	}
	certPEM, keyPEM, err := p.IssueClientCert("alice", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	alice, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if err := dial(&tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{alice}}); err != nil { //nolint:gosec // test
		t.Errorf("alice's certificate of the cluster CA: %v", err)
	}
	if err := dial(&tls.Config{InsecureSkipVerify: true}); err != nil { //nolint:gosec // test
		t.Errorf("a client without a certificate (bearer token): %v", err)
	}
	other, err := Ensure(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err = other.IssueClientCert("mallory", []string{AdminGroup}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	mallory, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if err := dial(&tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{mallory}}); err == nil { //nolint:gosec // test
		t.Error("a certificate of another CA got in")
	}
}

// TestLoadCA: a controller manager apart from the API server loads the CA
// that Ensure created and signs with it; a leaf certificate or a missing file
// is refused and nothing is created.
func TestLoadCA(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p, err := Ensure(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := LoadCA(filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ca.CAPEM(), p.CAPEM()) {
		t.Error("LoadCA loaded another CA")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := ca.SignRequest(req, x509.KeyUsageDigitalSignature, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: p.CAPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("certificate signed by the loaded CA: %v", err)
	}
	if _, err := LoadCA(filepath.Join(dir, AdminCertFile), filepath.Join(dir, AdminKeyFile)); err == nil {
		t.Error("LoadCA accepted a leaf certificate")
	}
	empty := t.TempDir()
	if _, err := LoadCA(filepath.Join(empty, CACertFile), filepath.Join(empty, CAKeyFile)); err == nil {
		t.Error("LoadCA of missing files: no error")
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("LoadCA created %d files", len(entries))
	}
}
