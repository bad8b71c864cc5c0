package security

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/security/bootstrap"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/controlplane"
)

var _ = Describe("Joining with a bootstrap token", Ordered, func() {
	var (
		cp    *controlplane.ControlPlane
		p     *pki.PKI
		admin identity
		hash  string
	)
	tokenAuth := func(token string) []string { return []string{"Authorization", "Bearer " + token} }
	anon := func() *http.Client {
		GinkgoHelper()
		i := newIdentity(p, "unused")
		tr := i.http.Transport.(*http.Transport).Clone()
		tr.TLSClientConfig.Certificates = nil
		return &http.Client{Transport: tr}
	}
	createToken := func(ctx context.Context, ttl time.Duration) string {
		GinkgoHelper()
		token, err := bootstrap.NewToken()
		Expect(err).NotTo(HaveOccurred())
		secret, err := bootstrap.NewSecret(token, "test", ttl, time.Now(), bootstrap.DefaultExtraGroup)
		Expect(err).NotTo(HaveOccurred())
		r := call(ctx, admin.http, http.MethodPost, cp.URL()+"/api/v1/namespaces/kube-system/secrets", secret)
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		return token
	}

	BeforeAll(func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		cp = start(ctx, controlplane.Options{DataDir: dir, Secure: true, Controllers: []string{"serviceaccount", "csr", "root-ca-cert-publisher"}})
		var err error
		p, err = pki.Ensure(pki.Options{Dir: filepath.Join(dir, "pki")})
		Expect(err).NotTo(HaveOccurred())
		admin = newIdentity(p, "test-admin", "system:masters")
		hash, err = bootstrap.CACertHash(p.CAPEM())
		Expect(err).NotTo(HaveOccurred())
	}, NodeTimeout(time.Minute))

	It("issues a node client certificate for a bootstrap token, approved and signed automatically", func(ctx SpecContext) {
		token := createToken(ctx, time.Hour)
		id, _, err := bootstrap.Parse(token)
		Expect(err).NotTo(HaveOccurred())

		By("the token authenticates as system:bootstrap:ID and may do nothing but request certificates")
		c := anon()
		// The authenticator reads the token's Secret through the watch cache:
		// wait until it sees it.
		Eventually(func(g Gomega) {
			r := call(ctx, c, http.MethodPost, cp.URL()+"/apis/authentication.k8s.io/v1/selfsubjectreviews",
				`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`, tokenAuth(token)...)
			g.Expect(r.code).To(Equal(http.StatusCreated), r.String())
			g.Expect(r.body["status"]).To(HaveKeyWithValue("userInfo", HaveKeyWithValue("username", "system:bootstrap:"+id)))
		}).WithContext(ctx).Should(Succeed())
		Expect(call(ctx, c, http.MethodGet, cp.URL()+"/api/v1/namespaces/kube-system/secrets", nil, tokenAuth(token)...).code).To(Equal(http.StatusForbidden))
		Expect(call(ctx, c, http.MethodGet, cp.URL()+"/api/v1/nodes", nil, tokenAuth(token)...).code).To(Equal(http.StatusForbidden))

		By("joining: the CA is found by its hash, the CSR approved and signed")
		creds, err := bootstrap.Join(ctx, bootstrap.JoinOptions{Server: cp.URL(), Token: token, CACertHash: hash, NodeName: "joined-1",
			Timeout: 20 * time.Second, PollInterval: 100 * time.Millisecond, Logger: GinkgoLogr})
		Expect(err).NotTo(HaveOccurred())
		Expect(creds.CAPEM).To(Equal(p.CAPEM()))

		list := call(ctx, admin.http, http.MethodGet, cp.URL()+"/apis/certificates.k8s.io/v1/certificatesigningrequests", nil)
		Expect(list.code).To(Equal(http.StatusOK), list.String())
		var csrs struct {
			Items []struct {
				Spec struct {
					Username, SignerName string
					Groups               []string
				}
				Status struct {
					Conditions []struct{ Type, Reason string }
				}
			}
		}
		Expect(json.Unmarshal([]byte(list.raw), &csrs)).To(Succeed())
		Expect(csrs.Items).To(HaveLen(1))
		Expect(csrs.Items[0].Spec.Username).To(Equal("system:bootstrap:" + id))
		Expect(csrs.Items[0].Spec.Groups).To(ContainElements("system:bootstrappers", bootstrap.DefaultExtraGroup))
		Expect(csrs.Items[0].Status.Conditions).To(ContainElement(HaveField("Reason", "AutoApproved")))

		By("the certificate authenticates as system:node:joined-1 under the Node authorizer")
		node := identityFrom(creds)
		r := call(ctx, node, http.MethodPost, cp.URL()+"/api/v1/nodes", map[string]any{"metadata": map[string]any{"name": "joined-1"}})
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		r = call(ctx, node, http.MethodPost, cp.URL()+"/api/v1/nodes", map[string]any{"metadata": map[string]any{"name": "joined-2"}})
		Expect(r.code).To(Equal(http.StatusForbidden), r.String())
	}, SpecTimeout(45*time.Second))

	It("patches a request's approval and status, labels and annotations included, as Kubernetes does", func(ctx SpecContext) {
		url := cp.URL() + "/apis/certificates.k8s.io/v1/certificatesigningrequests"
		r := call(ctx, admin.http, http.MethodPost, url, map[string]any{
			"metadata": map[string]any{"name": "patched"},
			"spec": map[string]any{"request": newCSR("someone"), "signerName": "example.com/never",
				"usages": []any{"digital signature", "client auth"}},
		})
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		merge := []string{"Content-Type", "application/merge-patch+json"}
		r = call(ctx, admin.http, http.MethodPatch, url+"/patched/approval",
			`{"metadata":{"annotations":{"approval":"patched"}},"spec":{"signerName":"ignored"},"status":{"conditions":[{"type":"Custom","status":"True","reason":"Test"}]}}`, merge...)
		Expect(r.code).To(Equal(http.StatusOK), r.String())
		Expect(r.body["metadata"]).To(HaveKeyWithValue("annotations", HaveKeyWithValue("approval", "patched")))
		Expect(r.body["spec"]).To(HaveKeyWithValue("signerName", "example.com/never"))
		Expect(r.body["status"]).To(HaveKeyWithValue("conditions", ConsistOf(HaveKeyWithValue("type", "Custom"))))
		r = call(ctx, admin.http, http.MethodPatch, url+"/patched/status", `{"metadata":{"labels":{"status":"patched"}}}`, merge...)
		Expect(r.code).To(Equal(http.StatusOK), r.String())
		Expect(r.body["metadata"]).To(HaveKeyWithValue("labels", HaveKeyWithValue("status", "patched")))
		Expect(r.body["metadata"]).To(HaveKeyWithValue("annotations", HaveKeyWithValue("approval", "patched")))
		r = call(ctx, admin.http, http.MethodGet, url+"?fieldSelector=spec.signerName%3Dexample.com%2Fnever", nil)
		Expect(r.code).To(Equal(http.StatusOK), r.String())
		Expect(r.body["items"]).To(ConsistOf(HaveKeyWithValue("metadata", HaveKeyWithValue("name", "patched"))))
	})

	It("refuses wrong, expired and unknown tokens, and leaves other requests to a human", func(ctx SpecContext) {
		token := createToken(ctx, time.Hour)
		id, _, err := bootstrap.Parse(token)
		Expect(err).NotTo(HaveOccurred())
		c := anon()
		wrong := id + ".0000000000000000"
		Expect(call(ctx, c, http.MethodGet, cp.URL()+"/api", nil, tokenAuth(wrong)...).code).To(Equal(http.StatusUnauthorized))
		Expect(call(ctx, c, http.MethodGet, cp.URL()+"/api", nil, tokenAuth("zzzzzz.zzzzzzzzzzzzzzzz")...).code).To(Equal(http.StatusUnauthorized))
		_, err = bootstrap.Join(ctx, bootstrap.JoinOptions{Server: cp.URL(), Token: wrong, CACertHash: hash, NodeName: "x", Timeout: 5 * time.Second})
		Expect(err).To(MatchError(ContainSubstring("Unauthorized")))
		_, err = bootstrap.Join(ctx, bootstrap.JoinOptions{Server: cp.URL(), Token: token, CACertHash: "sha256:" + strings.Repeat("0", 64), NodeName: "x"})
		Expect(err).To(MatchError(ContainSubstring("no CA certificate with public key hash")))

		By("an expired token")
		expired, err := bootstrap.NewToken()
		Expect(err).NotTo(HaveOccurred())
		secret, err := bootstrap.NewSecret(expired, "", time.Minute, time.Now().Add(-time.Hour))
		Expect(err).NotTo(HaveOccurred())
		Expect(call(ctx, admin.http, http.MethodPost, cp.URL()+"/api/v1/namespaces/kube-system/secrets", secret).code).To(Equal(http.StatusCreated))
		Eventually(func() int {
			return call(ctx, c, http.MethodGet, cp.URL()+"/api", nil, tokenAuth(token)...).code
		}).WithContext(ctx).Should(Equal(http.StatusOK))
		Expect(call(ctx, c, http.MethodGet, cp.URL()+"/api", nil, tokenAuth(expired)...).code).To(Equal(http.StatusUnauthorized))

		By("a request for another subject stays pending; the requester is recorded whatever the client says")
		req := newCSR("system:node:"+"evil", "system:masters")
		r := call(ctx, c, http.MethodPost, cp.URL()+"/apis/certificates.k8s.io/v1/certificatesigningrequests", map[string]any{
			"metadata": map[string]any{"name": "not-a-node"},
			"spec": map[string]any{"request": req, "signerName": "kubernetes.io/kube-apiserver-client-kubelet",
				"usages": []any{"digital signature", "client auth"}, "username": "system:admin", "groups": []any{"system:masters"}},
		}, tokenAuth(token)...)
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		Expect(r.body["spec"]).To(HaveKeyWithValue("username", "system:bootstrap:"+id))
		Consistently(func() any {
			got := call(ctx, admin.http, http.MethodGet, cp.URL()+"/apis/certificates.k8s.io/v1/certificatesigningrequests/not-a-node", nil)
			return got.body["status"]
		}).WithContext(ctx).WithTimeout(2 * time.Second).Should(Or(BeNil(), BeEmpty()))
	}, SpecTimeout(45*time.Second))

	It("lets kubectl approve and deny requests a human must decide on", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		kc := filepath.Join(dir, "kubeconfig")
		Expect(cp.WriteKubeconfig(kc)).To(Succeed())
		kubectl := func(args ...string) string {
			GinkgoHelper()
			out, code := kubectl(ctx, kc, args...)
			Expect(code).To(BeZero(), "kubectl %v:\n%s", args, out)
			return out
		}
		for _, name := range []string{"alice-client", "mallory-client"} {
			r := call(ctx, admin.http, http.MethodPost, cp.URL()+"/apis/certificates.k8s.io/v1/certificatesigningrequests", map[string]any{
				"metadata": map[string]any{"name": name},
				"spec": map[string]any{"request": newCSR(strings.TrimSuffix(name, "-client"), "devs"), "signerName": "kubernetes.io/kube-apiserver-client",
					"usages": []any{"digital signature", "client auth"}, "expirationSeconds": 3600}})
			Expect(r.code).To(Equal(http.StatusCreated), r.String())
		}
		Expect(kubectl("get", "csr")).To(And(ContainSubstring("alice-client"), ContainSubstring("Pending")))
		Expect(kubectl("certificate", "approve", "alice-client")).To(ContainSubstring("approved"))
		Expect(kubectl("certificate", "deny", "mallory-client")).To(ContainSubstring("denied"))
		Eventually(func(g Gomega) {
			r := call(ctx, admin.http, http.MethodGet, cp.URL()+"/apis/certificates.k8s.io/v1/certificatesigningrequests/alice-client", nil)
			g.Expect(r.body["status"]).To(HaveKey("certificate"))
		}).WithContext(ctx).Should(Succeed())
		out := kubectl("get", "csr")
		Expect(out).To(MatchRegexp(`alice-client .*Approved,Issued`))
		Expect(out).To(MatchRegexp(`mallory-client .*Denied`))
		r := call(ctx, admin.http, http.MethodGet, cp.URL()+"/apis/certificates.k8s.io/v1/certificatesigningrequests/mallory-client", nil)
		Expect(r.body["status"]).NotTo(HaveKey("certificate"))
	}, SpecTimeout(45*time.Second))
})
