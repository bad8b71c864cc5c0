package filters

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

// TestX509ForgetsCertificatesOfClosedConnections: the memory of a verified
// certificate goes with the parsed certificate (its connection).
func TestX509ForgetsCertificatesOfClosedConnections(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "alice"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	ca, _ := x509.ParseCertificate(der)
	roots.AddCert(ca)
	a := NewX509(roots)
	connect := func() { // one connection: its own parsed certificate, two requests
		leaf, _ := x509.ParseCertificate(der)
		for range 2 {
			r := httptest.NewRequest("GET", "/api", nil)
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}
			if u, ok, err := a.Authenticate(r); !ok || err != nil || u.Name != "alice" {
				t.Fatalf("%+v %v %v", u, ok, err)
			}
		}
		if a.verified.count() == 0 {
			t.Fatal("a verified certificate of a live connection is not remembered")
		}
		runtime.KeepAlive(leaf)
	}
	for range 3 {
		connect()
	}
	deadline := time.Now().Add(10 * time.Second)
	for a.verified.count() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d certificates still remembered after their connections are gone", a.verified.count())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
