package security_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

func bindView(ctx context.Context) {
	r := asAdmin(ctx, http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", map[string]any{
		"metadata": map[string]any{"name": "alice-view"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
		"subjects": []any{map[string]any{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"}},
	})
	Expect(r.code).To(Or(Equal(http.StatusCreated), Equal(http.StatusConflict)), describe(r))
	Eventually(func(g Gomega) {
		g.Expect(as(ctx, "view-token", http.MethodGet, "/api/v1/namespaces/default/pods", nil).code).To(Equal(http.StatusOK))
	}).WithTimeout(5 * time.Second).Should(Succeed())
}

var _ = Describe("authentication", func() {
	It("refuses anonymous requests with 401 except on public paths", func(ctx SpecContext) {
		r := do(ctx, e.anon, "", http.MethodGet, "/api/v1/namespaces/default/pods", nil)
		Expect(r.code).To(Equal(http.StatusUnauthorized))
		Expect(r.body).To(HaveKeyWithValue("reason", "Unauthorized"))
		Expect(r.body).To(HaveKeyWithValue("kind", "Status"))
		for _, p := range []string{"/healthz", "/livez", "/readyz", "/version"} {
			Expect(do(ctx, e.anon, "", http.MethodGet, p, nil).code).To(Equal(http.StatusOK), p)
		}
		Expect(as(ctx, "wrong-token", http.MethodGet, "/api", nil).code).To(Equal(http.StatusUnauthorized))
	})

	It("accepts the admin client certificate (system:masters) and static tokens", func(ctx SpecContext) {
		Expect(asAdmin(ctx, http.MethodGet, "/api/v1/namespaces", nil).code).To(Equal(http.StatusOK))
		// carol has no bindings beyond discovery: authenticated, but forbidden.
		Expect(as(ctx, "carol-token", http.MethodGet, "/api", nil).code).To(Equal(http.StatusOK))
		r := as(ctx, "carol-token", http.MethodGet, "/api/v1/namespaces", nil)
		Expect(r.code).To(Equal(http.StatusForbidden))
		Expect(r.message()).To(Equal(`namespaces is forbidden: User "carol" cannot list resource "namespaces" in API group "" at the cluster scope`))
	})
})

var _ = Describe("RBAC authorization", func() {
	It("lets a view user get and list but not create, with Kubernetes' message", func(ctx SpecContext) {
		bindView(ctx)
		Expect(asAdmin(ctx, http.MethodPost, "/api/v1/namespaces/default/pods", pod("viewed", nil)).code).To(Equal(http.StatusCreated))
		Expect(as(ctx, "view-token", http.MethodGet, "/api/v1/namespaces/default/pods/viewed", nil).code).To(Equal(http.StatusOK))
		Expect(as(ctx, "view-token", http.MethodGet, "/api/v1/namespaces/default/pods/viewed/log", nil).code).NotTo(Equal(http.StatusForbidden))
		r := as(ctx, "view-token", http.MethodPost, "/api/v1/namespaces/default/pods", pod("p1", nil))
		Expect(r.code).To(Equal(http.StatusForbidden), describe(r))
		Expect(r.message()).To(Equal(`pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "default"`))
		Expect(r.body).To(HaveKeyWithValue("reason", "Forbidden"))
		r = as(ctx, "view-token", http.MethodDelete, "/api/v1/namespaces/default/pods/viewed", nil)
		Expect(r.message()).To(Equal(`pods "viewed" is forbidden: User "alice" cannot delete resource "pods" in API group "" in the namespace "default"`))
		r = as(ctx, "view-token", http.MethodGet, "/api/v1/namespaces/default/secrets", nil)
		Expect(r.code).To(Equal(http.StatusForbidden))
		r = as(ctx, "view-token", http.MethodGet, "/api/v1/namespaces/kube-system/pods", nil)
		Expect(r.message()).To(ContainSubstring(`in the namespace "kube-system"`))
	})

	It("answers SubjectAccessReviews, SelfSubjectAccessReviews and SelfSubjectRulesReviews", func(ctx SpecContext) {
		bindView(ctx)
		sar := func(verb string) map[string]any {
			return map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": map[string]any{
				"user": "alice", "groups": []string{"system:authenticated"},
				"resourceAttributes": map[string]any{"namespace": "default", "verb": verb, "resource": "pods"}}}
		}
		r := asAdmin(ctx, http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar("list"))
		Expect(r.code).To(Equal(http.StatusCreated), describe(r))
		Expect(r.body["status"]).To(HaveKeyWithValue("allowed", true))
		r = asAdmin(ctx, http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar("create"))
		Expect(r.body["status"]).To(HaveKeyWithValue("allowed", false))
		// alice may not ask about others, but may ask about herself.
		Expect(as(ctx, "view-token", http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar("list")).code).To(Equal(http.StatusForbidden))
		r = as(ctx, "view-token", http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", map[string]any{
			"spec": map[string]any{"resourceAttributes": map[string]any{"namespace": "default", "verb": "get", "resource": "pods"}}})
		Expect(r.code).To(Equal(http.StatusCreated), describe(r))
		Expect(r.body["status"]).To(HaveKeyWithValue("allowed", true))
		Expect(r.body).To(HaveKeyWithValue("kind", "SelfSubjectAccessReview"))
		r = as(ctx, "view-token", http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", map[string]any{"spec": map[string]any{"namespace": "default"}})
		Expect(r.code).To(Equal(http.StatusCreated), describe(r))
		Expect(r.raw).To(ContainSubstring("pods/log"))
		r = asAdmin(ctx, http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", map[string]any{"spec": map[string]any{
			"resourceAttributes": map[string]any{"verb": "get", "resource": "pods"}}})
		Expect(r.code).To(Equal(http.StatusUnprocessableEntity), describe(r))
	})

	It("refuses RBAC escalation unless the user holds the rights or may escalate/bind", func(ctx SpecContext) {
		r := asAdmin(ctx, http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", map[string]any{
			"metadata": map[string]any{"name": "role-manager"},
			"rules": []any{
				map[string]any{"apiGroups": []string{"rbac.authorization.k8s.io"}, "resources": []string{"roles", "rolebindings"}, "verbs": []string{"create", "get"}},
				map[string]any{"apiGroups": []string{""}, "resources": []string{"pods"}, "verbs": []string{"get", "list"}},
			}})
		Expect(r.code).To(Equal(http.StatusCreated), describe(r))
		r = asAdmin(ctx, http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", map[string]any{
			"metadata": map[string]any{"name": "bob-role-manager"},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "role-manager"},
			"subjects": []any{map[string]any{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "team-a"}},
		})
		Expect(r.code).To(Equal(http.StatusCreated), describe(r))
		secretsRole := map[string]any{"metadata": map[string]any{"name": "secret-reader"},
			"rules": []any{map[string]any{"apiGroups": []string{""}, "resources": []string{"secrets"}, "verbs": []string{"get"}}}}
		Eventually(func(g Gomega) {
			r = as(ctx, "bob-token", http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", secretsRole)
			g.Expect(r.code).To(Equal(http.StatusForbidden), describe(r))
			g.Expect(r.message()).To(Equal(`roles.rbac.authorization.k8s.io "secret-reader" is forbidden: user "bob" (groups=["team-a" "team-b" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:` +
				"\n" + `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`))
		}).WithTimeout(5 * time.Second).Should(Succeed())
		// Within bob's own rights it works.
		r = as(ctx, "bob-token", http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", map[string]any{
			"metadata": map[string]any{"name": "pod-reader"},
			"rules":    []any{map[string]any{"apiGroups": []string{""}, "resources": []string{"pods"}, "verbs": []string{"get"}}}})
		Expect(r.code).To(Equal(http.StatusCreated), describe(r))
		// Binding a role with more rights than bob holds is refused.
		r = as(ctx, "bob-token", http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", map[string]any{
			"metadata": map[string]any{"name": "carol-admin"},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
			"subjects": []any{map[string]any{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "carol"}},
		})
		Expect(r.code).To(Equal(http.StatusForbidden), describe(r))
		Expect(r.message()).To(HavePrefix(`rolebindings.rbac.authorization.k8s.io "carol-admin" is forbidden: user "bob"`))
	})

	It("serves kubectl auth can-i with a token kubeconfig", func(ctx SpecContext) {
		if _, err := os.Stat("/usr/bin/kubectl"); err != nil {
			Skip("kubectl is not installed")
		}
		bindView(ctx)
		home := GinkgoT().TempDir()
		kc := filepath.Join(home, "kubeconfig")
		Expect(pki.WriteKubeconfig(kc, e.ts.URL, "converge", e.pki.CAPEM(), nil, nil, "view-token")).To(Succeed())
		canI := func(args ...string) (string, error) {
			cmd := exec.CommandContext(ctx, "/usr/bin/kubectl", append([]string{"--kubeconfig", kc, "--cache-dir", filepath.Join(home, "cache"), "auth", "can-i"}, args...)...)
			cmd.Env = append(os.Environ(), "HOME="+home)
			out, err := cmd.CombinedOutput()
			return strings.TrimSpace(string(out)), err
		}
		out, err := canI("list", "pods", "-n", "default")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(HaveSuffix("yes"))
		out, err = canI("create", "pods", "-n", "default")
		Expect(err).To(HaveOccurred())
		Expect(out).To(HaveSuffix("no"))
		out, err = canI("--list", "-n", "default")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("pods/log"))
		Expect(out).To(ContainSubstring("selfsubjectaccessreviews.authorization.k8s.io"))

		admin := filepath.Join(home, "admin.kubeconfig")
		Expect(e.pki.WriteAdminKubeconfig(admin, e.ts.URL, "converge")).To(Succeed())
		cmd := exec.CommandContext(ctx, "/usr/bin/kubectl", "--kubeconfig", admin, "--cache-dir", filepath.Join(home, "cache2"), "auth", "can-i", "delete", "nodes")
		cmd.Env = append(os.Environ(), "HOME="+home)
		b, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(b))
		Expect(strings.TrimSpace(string(b))).To(HaveSuffix("yes"))
	})
})

// webhookServer serves AdmissionReviews with review and returns its URL and CA bundle.
func webhookServer(review func(req map[string]any) map[string]any) (string, string) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Request map[string]any `json:"request"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &in)
		resp := review(in.Request)
		resp["uid"] = in.Request["uid"]
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
	}))
	DeferCleanup(ts.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	return ts.URL, base64.StdEncoding.EncodeToString(ca)
}

var _ = Describe("admission webhooks", func() {
	It("lets a validating webhook deny a pod with its message", func(ctx SpecContext) {
		url, ca := webhookServer(func(req map[string]any) map[string]any {
			labels, _ := req["object"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)
			if labels["deny"] == "yes" {
				return map[string]any{"allowed": false, "status": map[string]any{"code": 403, "message": "pods labelled deny=yes are not welcome"}}
			}
			return map[string]any{"allowed": true}
		})
		r := asAdmin(ctx, http.MethodPost, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", map[string]any{
			"metadata": map[string]any{"name": "deny-pods"},
			"webhooks": []any{map[string]any{
				"name": "deny.converge.dev", "clientConfig": map[string]any{"url": url, "caBundle": ca},
				"rules":       []any{map[string]any{"operations": []string{"CREATE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"pods"}}},
				"sideEffects": "None", "admissionReviewVersions": []string{"v1"},
				"objectSelector": map[string]any{"matchExpressions": []any{map[string]any{"key": "deny", "operator": "Exists"}}},
			}}})
		Expect(r.code).To(Equal(http.StatusCreated), describe(r))
		// The configuration reaches the webhook plugin through the watch cache:
		// until then pods are created, so each attempt uses a new name.
		attempt := 0
		Eventually(func(g Gomega) {
			attempt++
			r := asAdmin(ctx, http.MethodPost, "/api/v1/namespaces/default/pods", pod("denied-"+strconv.Itoa(attempt), map[string]string{"deny": "yes"}))
			g.Expect(r.code).To(Equal(http.StatusForbidden), describe(r))
			g.Expect(r.message()).To(Equal(`admission webhook "deny.converge.dev" denied the request: pods labelled deny=yes are not welcome`))
		}).WithTimeout(5 * time.Second).Should(Succeed())
		Expect(asAdmin(ctx, http.MethodPost, "/api/v1/namespaces/default/pods", pod("allowed", map[string]string{"deny": "no"})).code).To(Equal(http.StatusCreated))
		Expect(asAdmin(ctx, http.MethodGet, "/api/v1/namespaces/default/pods/denied-"+strconv.Itoa(attempt), nil).code).To(Equal(http.StatusNotFound))
	})

	It("lets a mutating webhook add a label with a JSON patch", func(ctx SpecContext) {
		url, ca := webhookServer(func(req map[string]any) map[string]any {
			patch := base64.StdEncoding.EncodeToString([]byte(`[{"op":"add","path":"/metadata/labels/mutated","value":"true"}]`))
			return map[string]any{"allowed": true, "patchType": "JSONPatch", "patch": patch}
		})
		r := asAdmin(ctx, http.MethodPost, "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", map[string]any{
			"metadata": map[string]any{"name": "label-pods"},
			"webhooks": []any{map[string]any{
				"name": "label.converge.dev", "clientConfig": map[string]any{"url": url, "caBundle": ca},
				"rules":       []any{map[string]any{"operations": []string{"CREATE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"pods"}}},
				"sideEffects": "None", "admissionReviewVersions": []string{"v1"},
				"objectSelector": map[string]any{"matchLabels": map[string]string{"mutate": "yes"}},
			}}})
		Expect(r.code).To(Equal(http.StatusCreated), describe(r))
		Eventually(func(g Gomega) {
			name := "mutated-" + time.Now().Format("150405.000000")
			name = strings.ReplaceAll(name, ".", "-")
			r := asAdmin(ctx, http.MethodPost, "/api/v1/namespaces/default/pods", pod(name, map[string]string{"mutate": "yes"}))
			g.Expect(r.code).To(Equal(http.StatusCreated), describe(r))
			g.Expect(r.body["metadata"]).To(HaveKeyWithValue("labels", HaveKeyWithValue("mutated", "true")))
		}).WithTimeout(5 * time.Second).Should(Succeed())
	})
})

var _ = Describe("audit", func() {
	It("writes one line per request with the user", func(ctx SpecContext) {
		bindView(ctx)
		r := as(ctx, "view-token", http.MethodGet, "/api/v1/namespaces/default/pods/audit-probe", nil)
		Expect(r.code).To(Equal(http.StatusNotFound))
		f, err := os.Open(e.auditLog)
		Expect(err).NotTo(HaveOccurred())
		defer f.Close()
		var hits []filters.AuditEvent
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		lines := 0
		for sc.Scan() {
			lines++
			var ev filters.AuditEvent
			Expect(json.Unmarshal(sc.Bytes(), &ev)).To(Succeed(), sc.Text())
			if ev.ObjectRef != nil && ev.ObjectRef.Name == "audit-probe" {
				hits = append(hits, ev)
			}
		}
		Expect(lines).To(BeNumerically(">", 5))
		Expect(hits).To(HaveLen(1))
		ev := hits[0]
		Expect(ev.User.Name).To(Equal("alice"))
		Expect(ev.User.Groups).To(ContainElement("system:authenticated"))
		Expect(ev.Verb).To(Equal("get"))
		Expect(ev.Stage).To(Equal("ResponseComplete"))
		Expect(ev.Level).To(Equal(filters.LevelMetadata))
		Expect(ev.ObjectRef.Resource).To(Equal("pods"))
		Expect(ev.ObjectRef.Namespace).To(Equal("default"))
		Expect(ev.ResponseStatus.Code).To(Equal(http.StatusNotFound))
		Expect(ev.AuditID).NotTo(BeEmpty())
		Expect(ev.Annotations).To(HaveKey(filters.LatencyAnnotation))
	})
})

var _ = Describe("serving", func() {
	It("serves HTTPS through tls.NewListener with the PKI's config, as the control plane does", func(ctx SpecContext) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		srv := &http.Server{Handler: e.srv.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(tls.NewListener(ln, e.pki.ServerTLSConfig())) }()
		DeferCleanup(srv.Close)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://localhost:"+strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)+"/api/v1/namespaces", nil)
		resp, err := e.admin.Do(req)
		Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
	})
})

var _ = Describe("ServiceAccount tokens", func() {
	It("issues tokens through serviceaccounts/token and authenticates them as the ServiceAccount", func(ctx SpecContext) {
		r := asAdmin(ctx, http.MethodPost, "/api/v1/namespaces/default/serviceaccounts", map[string]any{"metadata": map[string]any{"name": "builder"}})
		Expect(r.code).To(Equal(http.StatusCreated), describe(r))
		r = asAdmin(ctx, http.MethodPost, "/api/v1/namespaces/default/serviceaccounts/builder/token", map[string]any{
			"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{}})
		Expect(r.code).To(Equal(http.StatusCreated), describe(r))
		token, _ := r.body["status"].(map[string]any)["token"].(string)
		Expect(token).NotTo(BeEmpty())

		Eventually(func(g Gomega) {
			r := as(ctx, token, http.MethodGet, "/api/v1/namespaces/default/configmaps", nil)
			g.Expect(r.code).To(Equal(http.StatusForbidden), describe(r))
			g.Expect(r.message()).To(Equal(`configmaps is forbidden: User "system:serviceaccount:default:builder" cannot list resource "configmaps" in API group "" in the namespace "default"`))
		}).WithTimeout(5 * time.Second).Should(Succeed())
		r = asAdmin(ctx, http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", map[string]any{
			"metadata": map[string]any{"name": "sa-view"},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
			"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "builder"}},
		})
		Expect(r.code).To(Equal(http.StatusCreated), describe(r))
		Eventually(func(g Gomega) {
			g.Expect(as(ctx, token, http.MethodGet, "/api/v1/namespaces/default/configmaps", nil).code).To(Equal(http.StatusOK))
		}).WithTimeout(5 * time.Second).Should(Succeed())

		// Deleting the ServiceAccount invalidates its tokens.
		Expect(asAdmin(ctx, http.MethodDelete, "/api/v1/namespaces/default/serviceaccounts/builder", nil).code).To(Equal(http.StatusOK))
		Eventually(func(g Gomega) {
			g.Expect(as(ctx, token, http.MethodGet, "/api/v1/namespaces/default/configmaps", nil).code).To(Equal(http.StatusUnauthorized))
		}).WithTimeout(5 * time.Second).Should(Succeed())
		// A tampered token is refused.
		Expect(as(ctx, token[:len(token)-4]+"AAAA", http.MethodGet, "/api", nil).code).To(Equal(http.StatusUnauthorized))
	})
})
