package security_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"

	authenticationv1 "github.com/converge-dev/converge/builtin/api/authentication/v1"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/builtin/security/serviceaccount"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/protobuf"
)

// serviceAccountToken creates ServiceAccount default/name (if needed) and
// returns a token for it with audiences (none: the API server's) and its UID.
func serviceAccountToken(ctx context.Context, name string, audiences ...string) (token, uid string) {
	r := asAdmin(ctx, http.MethodPost, "/api/v1/namespaces/default/serviceaccounts", map[string]any{"metadata": map[string]any{"name": name}})
	Expect(r.code).To(Or(Equal(http.StatusCreated), Equal(http.StatusConflict)), describe(r))
	r = asAdmin(ctx, http.MethodGet, "/api/v1/namespaces/default/serviceaccounts/"+name, nil)
	Expect(r.code).To(Equal(http.StatusOK), describe(r))
	uid, _ = r.body["metadata"].(map[string]any)["uid"].(string)
	spec := map[string]any{}
	if len(audiences) > 0 {
		spec["audiences"] = audiences
	}
	r = asAdmin(ctx, http.MethodPost, "/api/v1/namespaces/default/serviceaccounts/"+name+"/token", map[string]any{
		"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})
	Expect(r.code).To(Equal(http.StatusCreated), describe(r))
	token, _ = r.body["status"].(map[string]any)["token"].(string)
	Expect(token).NotTo(BeEmpty())
	return token, uid
}

// tokenReview creates a TokenReview as the admin and returns its status.
func tokenReview(ctx context.Context, token string, audiences ...string) map[string]any {
	spec := map[string]any{"token": token}
	if len(audiences) > 0 {
		spec["audiences"] = audiences
	}
	r := asAdmin(ctx, http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews", map[string]any{
		"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec})
	Expect(r.code).To(Equal(http.StatusCreated), describe(r))
	Expect(r.body).To(HaveKeyWithValue("kind", "TokenReview"))
	Expect(r.body).To(HaveKeyWithValue("apiVersion", "authentication.k8s.io/v1"))
	st, _ := r.body["status"].(map[string]any)
	return st
}

var _ = Describe("authentication.k8s.io reviews", func() {
	It("lists tokenreviews and selfsubjectreviews in discovery, cluster-scoped, create only", func(ctx SpecContext) {
		r := asAdmin(ctx, http.MethodGet, "/apis/authentication.k8s.io/v1", nil)
		Expect(r.code).To(Equal(http.StatusOK), describe(r))
		resources, _ := r.body["resources"].([]any)
		Expect(resources).To(ConsistOf(
			And(HaveKeyWithValue("name", "tokenreviews"), HaveKeyWithValue("kind", "TokenReview"),
				HaveKeyWithValue("namespaced", false), HaveKeyWithValue("verbs", ConsistOf("create"))),
			And(HaveKeyWithValue("name", "selfsubjectreviews"), HaveKeyWithValue("kind", "SelfSubjectReview"),
				HaveKeyWithValue("namespaced", false), HaveKeyWithValue("verbs", ConsistOf("create"))),
		))
	})

	Describe("TokenReview", func() {
		It("authenticates a ServiceAccount token as the ServiceAccount, for the API server's audience", func(ctx SpecContext) {
			token, uid := serviceAccountToken(ctx, "reviewed")
			Eventually(func(g Gomega) {
				g.Expect(tokenReview(ctx, token)).To(MatchAllKeys(Keys{
					"authenticated": BeTrue(),
					"user": MatchAllKeys(Keys{"username": Equal("system:serviceaccount:default:reviewed"), "uid": Equal(uid),
						"groups": Equal([]any{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}),
						"extra":  MatchAllKeys(Keys{serviceaccount.CredentialIDKey: ConsistOf(MatchRegexp(`^JTI=[0-9a-f-]{36}$`))})}),
					"audiences": Equal([]any{serviceaccount.DefaultIssuer}),
				}))
			}).WithTimeout(5 * time.Second).Should(Succeed())
		})

		It("reports the pod and node a token is bound to", func(ctx SpecContext) {
			r := asAdmin(ctx, http.MethodPost, "/api/v1/nodes", map[string]any{"metadata": map[string]any{"name": "bound-node"}})
			Expect(r.code).To(Equal(http.StatusCreated), describe(r))
			nodeUID, _ := r.body["metadata"].(map[string]any)["uid"].(string)
			p := pod("bound", nil)
			p["spec"].(map[string]any)["nodeName"] = "bound-node"
			r = asAdmin(ctx, http.MethodPost, "/api/v1/namespaces/default/pods", p)
			Expect(r.code).To(Equal(http.StatusCreated), describe(r))
			podUID, _ := r.body["metadata"].(map[string]any)["uid"].(string)
			serviceAccountToken(ctx, "bound-sa")
			request := func(uid string) response {
				return asAdmin(ctx, http.MethodPost, "/api/v1/namespaces/default/serviceaccounts/bound-sa/token", map[string]any{
					"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
					"spec": map[string]any{"boundObjectRef": map[string]any{"kind": "Pod", "apiVersion": "v1", "name": "bound", "uid": uid}}})
			}
			var token string
			Eventually(func(g Gomega) {
				r := request(podUID)
				g.Expect(r.code).To(Equal(http.StatusCreated), describe(r))
				token, _ = r.body["status"].(map[string]any)["token"].(string)
			}).WithTimeout(5 * time.Second).Should(Succeed())
			Eventually(func(g Gomega) {
				st := tokenReview(ctx, token)
				g.Expect(st).To(HaveKeyWithValue("authenticated", true))
				g.Expect(st["user"]).To(HaveKeyWithValue("extra", MatchAllKeys(Keys{
					serviceaccount.CredentialIDKey: HaveLen(1),
					serviceaccount.PodNameKey:      Equal([]any{"bound"}), serviceaccount.PodUIDKey: Equal([]any{podUID}),
					serviceaccount.NodeNameKey: Equal([]any{"bound-node"}), serviceaccount.NodeUIDKey: Equal([]any{nodeUID}),
				})))
			}).WithTimeout(5 * time.Second).Should(Succeed())

			r = request("not-the-uid")
			Expect(r.code).To(Equal(http.StatusConflict), describe(r))
			r = asAdmin(ctx, http.MethodPost, "/api/v1/namespaces/default/serviceaccounts/bound-sa/token", map[string]any{
				"spec": map[string]any{"boundObjectRef": map[string]any{"kind": "Pod", "apiVersion": "v1", "name": "missing"}}})
			Expect(r.code).To(Equal(http.StatusNotFound), describe(r))
		})

		It("honours spec.audiences: a token is valid only for the audiences it names", func(ctx SpecContext) {
			token, _ := serviceAccountToken(ctx, "audienced", "vault", "api-x")
			Eventually(func(g Gomega) {
				st := tokenReview(ctx, token, "other", "api-x")
				g.Expect(st).To(HaveKeyWithValue("authenticated", true))
				g.Expect(st).To(HaveKeyWithValue("audiences", []any{"api-x"}))
			}).WithTimeout(5 * time.Second).Should(Succeed())
			Expect(tokenReview(ctx, token)).To(Equal(map[string]any{"user": map[string]any{},
				"error": `token audiences ["vault" "api-x"] is invalid for the target audiences ["` + serviceaccount.DefaultIssuer + `"]`}))
			Expect(tokenReview(ctx, token, "other")).To(HaveKeyWithValue("error",
				`token audiences ["vault" "api-x"] is invalid for the target audiences ["other"]`))
			// A static token is for the API server only.
			Expect(tokenReview(ctx, "bob-token", "other")).To(Equal(map[string]any{"user": map[string]any{}, "error": "invalid bearer token"}))
		})

		It("reports a bad token as not authenticated, with the authenticators' error", func(ctx SpecContext) {
			Expect(tokenReview(ctx, "garbage")).To(Equal(map[string]any{"user": map[string]any{}, "error": "invalid bearer token"}))
			token, _ := serviceAccountToken(ctx, "tampered")
			st := tokenReview(ctx, token[:len(token)-4]+"AAAA")
			Expect(st).NotTo(HaveKey("authenticated"))
			Expect(st).To(HaveKeyWithValue("error", "invalid signature: verification failed"))
		})

		It("reads a protobuf TokenReview, as typed clients send it", func(ctx SpecContext) {
			body, err := (&protobuf.Decoder{}).EncodeObject(api.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"},
				&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "bob-token", Audiences: []string{serviceaccount.DefaultIssuer}}})
			Expect(err).NotTo(HaveOccurred())
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.ts.URL+"/apis/authentication.k8s.io/v1/tokenreviews", bytes.NewReader(body))
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set("Content-Type", "application/vnd.kubernetes.protobuf")
			resp, err := e.admin.Do(req)
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusCreated))
			var got authenticationv1.TokenReview
			Expect(json.NewDecoder(resp.Body).Decode(&got)).To(Succeed())
			Expect(got.Status.Authenticated).To(BeTrue())
			Expect(got.Status.User.Username).To(Equal("bob"))
		})

		It("authenticates static tokens with system:authenticated added", func(ctx SpecContext) {
			Expect(tokenReview(ctx, "bob-token")).To(Equal(map[string]any{
				"authenticated": true,
				"user":          map[string]any{"username": "bob", "uid": "1002", "groups": []any{"team-a", "team-b", "system:authenticated"}},
				"audiences":     []any{serviceaccount.DefaultIssuer},
			}))
		})

		It("needs a token and the create tokenreviews permission (system:auth-delegator)", func(ctx SpecContext) {
			r := asAdmin(ctx, http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews", map[string]any{"spec": map[string]any{}})
			Expect(r.code).To(Equal(http.StatusBadRequest), describe(r))
			Expect(r.message()).To(Equal("token is required for TokenReview in authentication"))
			r = asAdmin(ctx, http.MethodPost, "/apis/authentication.k8s.io/v1/namespaces/default/tokenreviews", map[string]any{"spec": map[string]any{"token": "bob-token"}})
			Expect(r.code).To(Equal(http.StatusNotFound), describe(r))

			body := map[string]any{"spec": map[string]any{"token": "bob-token"}}
			r = as(ctx, "carol-token", http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews", body)
			Expect(r.code).To(Equal(http.StatusForbidden), describe(r))
			Expect(r.message()).To(Equal(`tokenreviews.authentication.k8s.io is forbidden: User "carol" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope`))

			token, _ := serviceAccountToken(ctx, "delegate")
			r = asAdmin(ctx, http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", map[string]any{
				"metadata": map[string]any{"name": "delegate-auth"},
				"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:auth-delegator"},
				"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "delegate", "namespace": "default"}},
			})
			Expect(r.code).To(Equal(http.StatusCreated), describe(r))
			Eventually(func(g Gomega) {
				r := as(ctx, token, http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews", body)
				g.Expect(r.code).To(Equal(http.StatusCreated), describe(r))
				g.Expect(r.body["status"]).To(HaveKeyWithValue("authenticated", true))
				r = as(ctx, token, http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", map[string]any{
					"spec": map[string]any{"user": "bob", "resourceAttributes": map[string]any{"verb": "get", "resource": "pods"}}})
				g.Expect(r.code).To(Equal(http.StatusCreated), describe(r))
			}).WithTimeout(5 * time.Second).Should(Succeed())
		})
	})

	Describe("SelfSubjectReview", func() {
		It("answers every authenticated user with its own user information", func(ctx SpecContext) {
			r := as(ctx, "bob-token", http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews",
				`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)
			Expect(r.code).To(Equal(http.StatusCreated), describe(r))
			Expect(r.body).To(HaveKeyWithValue("kind", "SelfSubjectReview"))
			Expect(r.body["metadata"]).To(HaveKey("creationTimestamp"))
			Expect(r.body["status"]).To(Equal(map[string]any{"userInfo": map[string]any{
				"username": "bob", "uid": "1002", "groups": []any{"team-a", "team-b", "system:authenticated"}}}))

			r = asAdmin(ctx, http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews", `{}`)
			Expect(r.code).To(Equal(http.StatusCreated), describe(r))
			Expect(r.body["status"]).To(HaveKeyWithValue("userInfo", And(
				HaveKeyWithValue("username", pki.AdminUser), HaveKeyWithValue("groups", ContainElement("system:masters")))))

			By("impersonated, it answers with the impersonated user")
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.ts.URL+"/apis/authentication.k8s.io/v1/selfsubjectreviews", strings.NewReader(`{}`))
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Impersonate-User", "dave")
			req.Header.Add("Impersonate-Group", "devs")
			resp, err := e.admin.Do(req)
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusCreated))
			var got map[string]any
			Expect(json.NewDecoder(resp.Body).Decode(&got)).To(Succeed())
			Expect(got["status"]).To(Equal(map[string]any{"userInfo": map[string]any{
				"username": "dave", "groups": []any{"devs", "system:authenticated"}}}))
		})

		It("serves kubectl auth whoami", func(ctx SpecContext) {
			kubectl, err := exec.LookPath("kubectl")
			Expect(err).NotTo(HaveOccurred(), "kubectl is needed for this spec (hack/ci-deps.sh installs it)")
			home := GinkgoT().TempDir()
			kc := filepath.Join(home, "kubeconfig")
			Expect(pki.WriteKubeconfig(kc, e.ts.URL, "converge", e.pki.CAPEM(), nil, nil, "bob-token")).To(Succeed())
			cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kc, "--cache-dir", filepath.Join(home, "cache"), "auth", "whoami", "-o", "json")
			cmd.Env = append(os.Environ(), "HOME="+home)
			out, err := cmd.CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(out))
			var got map[string]any
			Expect(json.Unmarshal(out, &got)).To(Succeed(), string(out))
			Expect(got).To(HaveKeyWithValue("kind", "SelfSubjectReview"))
			Expect(got).To(HaveKeyWithValue("apiVersion", "authentication.k8s.io/v1"))
			Expect(got["status"]).To(Equal(map[string]any{"userInfo": map[string]any{
				"username": "bob", "uid": "1002", "groups": []any{"team-a", "team-b", "system:authenticated"}}}))

			cmd = exec.CommandContext(ctx, kubectl, "--kubeconfig", kc, "--cache-dir", filepath.Join(home, "cache"), "auth", "whoami")
			cmd.Env = append(os.Environ(), "HOME="+home)
			out, err = cmd.CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(out))
			Expect(string(out)).To(MatchRegexp(`Username\s+bob`))
			Expect(string(out)).To(MatchRegexp(`UID\s+1002`))
			Expect(string(out)).To(MatchRegexp(`Groups\s+\[team-a team-b system:authenticated\]`))
		})
	})
})
