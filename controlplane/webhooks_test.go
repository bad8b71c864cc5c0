package controlplane

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/security/pki"
)

// TestWebhookIssuerWithoutSecure checks that a control plane without Secure
// creates its CA in DataDir/pki on first use, issues webhook certificates
// from it, and that Secure later reuses the same CA.
func TestWebhookIssuerWithoutSecure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cp := &ControlPlane{opts: Options{DataDir: dir}}
	issuer := cp.webhookOptions().Issuer
	if issuer == nil {
		t.Fatal("no issuer with a DataDir")
	}
	if _, err := os.Stat(filepath.Join(dir, "pki", pki.CACertFile)); !os.IsNotExist(err) {
		t.Fatalf("the CA was created before it was needed (stat: %v)", err)
	}
	certPEM, keyPEM, err := issuer.IssueServingCert([]string{"127.0.0.1", "localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(issuer.CAPEM())
	if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("webhook certificate: %v", err)
	}
	secure, err := pki.Ensure(pki.Options{Dir: filepath.Join(dir, "pki")})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(secure.CAPEM(), issuer.CAPEM()) {
		t.Error("--secure created another CA")
	}
	if (&ControlPlane{opts: Options{EtcdServers: []string{"x"}}}).webhookOptions().Issuer != nil {
		t.Error("an issuer without a DataDir")
	}
}
