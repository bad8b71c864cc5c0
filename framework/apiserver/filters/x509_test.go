package filters_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// testCA issues client certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

func (ca *testCA) issue(t *testing.T, user string, groups []string, notAfter time.Time) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: user, Organization: groups},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: notAfter,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert
}

func authenticate(a filters.Authenticator, cert *x509.Certificate) (*filters.User, bool, error) {
	r := httptest.NewRequest("GET", "/api", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
	return a.Authenticate(r)
}

func TestX509RemembersVerifiedCertificates(t *testing.T) {
	t.Parallel()
	ca, other := newTestCA(t), newTestCA(t)
	for _, tc := range []struct {
		name string
		a    filters.X509
	}{{"verify every time", filters.X509{Roots: ca.pool}}, {"remembering", filters.NewX509(ca.pool)}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cert := ca.issue(t, "alice", []string{"dev"}, time.Now().Add(time.Hour))
			for i := range 3 {
				u, ok, err := authenticate(tc.a, cert)
				if !ok || err != nil || u.Name != "alice" || len(u.Groups) != 1 || u.Groups[0] != "dev" {
					t.Fatalf("request %d: %+v %v %v", i, u, ok, err)
				}
				u.Groups = append(u.Groups[:1], "system:authenticated")
				u.Groups[0] = "changed by the caller"
			}

			untrusted := other.issue(t, "mallory", []string{"system:masters"}, time.Now().Add(time.Hour))
			for i := range 2 {
				if u, ok, err := authenticate(tc.a, untrusted); ok || err == nil {
					t.Fatalf("request %d with a certificate of another CA: %+v %v %v", i, u, ok, err)
				}
			}

			// A certificate stops authenticating when it expires, remembered or not.
			short := ca.issue(t, "bob", nil, time.Now().Add(1500*time.Millisecond))
			if _, ok, err := authenticate(tc.a, short); !ok || err != nil {
				t.Fatalf("short-lived certificate before expiry: %v %v", ok, err)
			}
			time.Sleep(time.Until(short.NotAfter) + 100*time.Millisecond)
			if u, ok, err := authenticate(tc.a, short); ok || err == nil {
				t.Fatalf("expired certificate accepted: %+v %v %v", u, ok, err)
			}
		})
	}
}
