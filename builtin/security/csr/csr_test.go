package csr

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"testing"
	"time"

	authorizationv1 "github.com/converge-dev/converge/builtin/api/authorization/v1"
	certificatesv1 "github.com/converge-dev/converge/builtin/api/certificates/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

func request(t *testing.T, cn string, orgs []string, dns ...string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: orgs}, DNSNames: dns}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// fakeAPI is the controller's reader and writer: it holds one request,
// records the writes and answers SubjectAccessReviews by allowing create on
// certificatesigningrequests/SUB to members of the group mapped to SUB.
type fakeAPI struct {
	csr                      *certificatesv1.CertificateSigningRequest
	allowBySub               map[string]string
	approved, signed, failed bool
}

func (f *fakeAPI) Get(_ context.Context, _ client.ObjectKey, obj api.Object) error {
	*obj.(*certificatesv1.CertificateSigningRequest) = *f.csr
	return nil
}

func (f *fakeAPI) Approve(_ context.Context, c *certificatesv1.CertificateSigningRequest) error {
	f.approved = c.IsApproved()
	return nil
}

func (f *fakeAPI) UpdateStatus(_ context.Context, c *certificatesv1.CertificateSigningRequest) error {
	f.signed = len(c.Status.Certificate) > 0
	f.failed = c.Condition(certificatesv1.CertificateFailed) != nil
	return nil
}

func (f *fakeAPI) Allowed(_ context.Context, spec authorizationv1.SubjectAccessReviewSpec) (bool, error) {
	a := spec.ResourceAttributes
	g, ok := f.allowBySub[a.Subresource]
	return ok && a.Verb == "create" && a.Resource == "certificatesigningrequests" && slices.Contains(spec.Groups, g), nil
}

func TestReconcile(t *testing.T) {
	nodeUsages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	allow := map[string]string{"nodeclient": "system:bootstrappers", "selfnodeclient": "system:nodes"}
	for _, tc := range []struct {
		name         string
		cn           string
		orgs         []string
		dns          []string
		signer       string
		usages       []certificatesv1.KeyUsage
		user         string
		groups       []string
		preApproved  bool
		wantApproved bool
		wantSigned   bool
		wantFailed   bool
	}{
		{name: "bootstrap token asks for a node cert", cn: "system:node:n1", orgs: []string{"system:nodes"},
			user: "system:bootstrap:abcdef", groups: []string{"system:bootstrappers"}, wantApproved: true},
		{name: "node renews its own", cn: "system:node:n1", orgs: []string{"system:nodes"},
			user: "system:node:n1", groups: []string{"system:nodes"}, wantApproved: true},
		{name: "node asks for another node", cn: "system:node:n2", orgs: []string{"system:nodes"},
			user: "system:node:n1", groups: []string{"system:nodes"}},
		{name: "bootstrap token asks for masters", cn: "system:node:n1", orgs: []string{"system:nodes", "system:masters"},
			user: "system:bootstrap:abcdef", groups: []string{"system:bootstrappers"}},
		{name: "with SANs", cn: "system:node:n1", orgs: []string{"system:nodes"}, dns: []string{"n1"},
			user: "system:bootstrap:abcdef", groups: []string{"system:bootstrappers"}},
		{name: "server usage", cn: "system:node:n1", orgs: []string{"system:nodes"},
			usages: []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth, certificatesv1.UsageClientAuth},
			user:   "system:bootstrap:abcdef", groups: []string{"system:bootstrappers"}},
		{name: "someone else", cn: "system:node:n1", orgs: []string{"system:nodes"}, user: "alice", groups: []string{"dev"}},
		{name: "approved by a human is signed", cn: "system:node:n1", orgs: []string{"system:nodes"}, user: "alice",
			preApproved: true, wantSigned: true},
		{name: "approved but invalid for the signer fails", cn: "alice", orgs: nil, user: "alice",
			preApproved: true, wantFailed: true},
		{name: "approved client cert for kube-apiserver-client", cn: "alice", orgs: []string{"dev"}, user: "alice",
			signer: certificatesv1.KubeAPIServerClientSignerName, preApproved: true, wantSigned: true},
		{name: "another signer is left alone", cn: "alice", user: "alice", signer: "example.com/signer", preApproved: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.signer == "" {
				tc.signer = certificatesv1.KubeAPIServerClientKubeletSignerName
			}
			if tc.usages == nil {
				tc.usages = nodeUsages
			}
			csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: api.ObjectMeta{Name: "c"},
				Spec: certificatesv1.CertificateSigningRequestSpec{Request: request(t, tc.cn, tc.orgs, tc.dns...), SignerName: tc.signer,
					Usages: tc.usages, Username: tc.user, Groups: tc.groups}}
			if tc.preApproved {
				csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: "True"}}
			}
			var validity time.Duration
			f := &fakeAPI{csr: csr, allowBySub: allow}
			r := &reconciler{opts: Options{MaxValidity: time.Hour,
				Sign: func(req *x509.CertificateRequest, _ x509.KeyUsage, _ []x509.ExtKeyUsage, v time.Duration) ([]byte, error) {
					validity = v
					return []byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"), nil
				}},
				read: f, write: f,
			}
			if _, err := r.Reconcile(t.Context(), reconcile.Request{}); err != nil {
				t.Fatal(err)
			}
			approved, signed, failed := f.approved, f.signed, f.failed
			if approved != tc.wantApproved || signed != tc.wantSigned || failed != tc.wantFailed {
				t.Fatalf("approved=%v signed=%v failed=%v; want %v %v %v", approved, signed, failed, tc.wantApproved, tc.wantSigned, tc.wantFailed)
			}
			if signed && validity != time.Hour {
				t.Fatalf("validity %s, want the 1h cap", validity)
			}
		})
	}
}
