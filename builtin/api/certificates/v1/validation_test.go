package v1

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"
)

func pemRequest(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "x"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestValidate(t *testing.T) {
	req := pemRequest(t)
	valid := func() *CertificateSigningRequest {
		return &CertificateSigningRequest{Spec: CertificateSigningRequestSpec{Request: req, SignerName: KubeAPIServerClientSignerName,
			Usages: []KeyUsage{UsageClientAuth}}}
	}
	short := int32(60)
	approved := CertificateSigningRequestCondition{Type: CertificateApproved, Status: ConditionTrue}
	for _, tc := range []struct {
		name   string
		mutate func(c *CertificateSigningRequest)
		want   string
	}{
		{"valid", func(*CertificateSigningRequest) {}, ""},
		{"no request", func(c *CertificateSigningRequest) { c.Spec.Request = nil }, "spec.request: Required value"},
		{"garbage request", func(c *CertificateSigningRequest) { c.Spec.Request = []byte("nope") }, "spec.request: Invalid value"},
		{"no signer", func(c *CertificateSigningRequest) { c.Spec.SignerName = "" }, "spec.signerName: Required value"},
		{"bad signer", func(c *CertificateSigningRequest) { c.Spec.SignerName = "nodomain" }, "spec.signerName: Invalid value"},
		{"short expiry", func(c *CertificateSigningRequest) { c.Spec.ExpirationSeconds = &short }, "spec.expirationSeconds"},
		{"no usages", func(c *CertificateSigningRequest) { c.Spec.Usages = nil }, "spec.usages: Required value"},
		{"unknown usage", func(c *CertificateSigningRequest) { c.Spec.Usages = []KeyUsage{"fly"} }, "spec.usages[0]: Unsupported value"},
		{"approved and denied", func(c *CertificateSigningRequest) {
			c.Status.Conditions = []CertificateSigningRequestCondition{approved, {Type: CertificateDenied, Status: ConditionTrue}}
		}, "mutually exclusive"},
		{"certificate without approval", func(c *CertificateSigningRequest) {
			c.Status.Certificate = []byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
		}, "status.certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.mutate(c)
			errs := ValidateCertificateSigningRequest(c)
			got := ""
			if len(errs) > 0 {
				got = errs.ToError().Error()
			}
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("errors %q, want %q", got, tc.want)
			}
		})
	}
	old := valid()
	old.Status.Conditions = []CertificateSigningRequestCondition{approved}
	for _, tc := range []struct {
		name   string
		mutate func(c *CertificateSigningRequest)
		want   string
	}{
		{"sign", func(c *CertificateSigningRequest) {
			c.Status.Certificate = []byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
		}, ""},
		{"change spec", func(c *CertificateSigningRequest) { c.Spec.SignerName = "example.com/x" }, "spec: Forbidden"},
		{"drop approval", func(c *CertificateSigningRequest) { c.Status.Conditions = nil }, "may not remove"},
	} {
		t.Run("update "+tc.name, func(t *testing.T) {
			c := valid()
			c.Status.Conditions = []CertificateSigningRequestCondition{approved}
			tc.mutate(c)
			errs := ValidateCertificateSigningRequestUpdate(c, old)
			got := ""
			if len(errs) > 0 {
				got = errs.ToError().Error()
			}
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("errors %q, want %q", got, tc.want)
			}
		})
	}
}
