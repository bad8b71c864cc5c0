package pki

import (
	"bytes"
	"crypto/x509"
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
