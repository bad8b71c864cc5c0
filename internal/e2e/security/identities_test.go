package security

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/cri/simulated"
	"github.com/converge-dev/converge/builtin/security/bootstrap"
	securitynode "github.com/converge-dev/converge/builtin/security/node"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/rest"
)

// identity is a client certificate issued by the control plane's CA.
type identity struct {
	cert, key []byte
	http      *http.Client
}

func newIdentity(p *pki.PKI, user string, groups ...string) identity {
	GinkgoHelper()
	cert, key, err := p.IssueClientCert(user, groups, time.Hour)
	Expect(err).NotTo(HaveOccurred())
	pair, err := tls.X509KeyPair(cert, key)
	Expect(err).NotTo(HaveOccurred())
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.CAPEM())
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}
	DeferCleanup(tr.CloseIdleConnections)
	return identity{cert: cert, key: key, http: &http.Client{Transport: tr}}
}

func (i identity) config(p *pki.PKI, url string) *client.Config {
	return &client.Config{Host: url, TLS: rest.TLSConfig{CAData: p.CAPEM(), CertData: i.cert, KeyData: i.key}}
}

// auditEntry is the part of an audit line the specs read.
type auditEntry struct {
	Verb string
	User struct {
		Username string
		Groups   []string
	}
	ObjectRef *struct {
		Resource, Subresource, Namespace, Name string
	}
	ResponseStatus *struct{ Code int }
}

func readAudit(path string) []auditEntry {
	GinkgoHelper()
	f, err := os.Open(path)
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	var out []auditEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var e auditEntry
		Expect(json.Unmarshal(sc.Bytes(), &e)).To(Succeed())
		out = append(out, e)
	}
	return out
}

// did reports whether user made a successful request with verb on
// resource/subresource.
func did(entries []auditEntry, user, verb, resource, sub string) bool {
	for _, e := range entries {
		if e.User.Username == user && e.Verb == verb && e.ObjectRef != nil && e.ObjectRef.Resource == resource &&
			e.ObjectRef.Subresource == sub && e.ResponseStatus != nil && e.ResponseStatus.Code < 300 {
			return true
		}
	}
	return false
}

var _ = Describe("Per-component identities, the Node authorizer and NodeRestriction", Ordered, func() {
	var (
		cp       *controlplane.ControlPlane
		p        *pki.PKI
		admin    identity
		n1, n2   identity
		auditLog string
		podName  string
	)
	const ns = "/api/v1/namespaces/default"

	BeforeAll(func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		auditLog = filepath.Join(dir, "audit.log")
		cp = start(ctx, controlplane.Options{DataDir: dir, Secure: true, Controllers: []string{"*"}, Scheduler: true, AuditLogPath: auditLog})
		var err error
		p, err = pki.Ensure(pki.Options{Dir: filepath.Join(dir, "pki")})
		Expect(err).NotTo(HaveOccurred())
		admin = newIdentity(p, "test-admin", "system:masters")
		n1 = newIdentity(p, securitynode.UserPrefix+"n1", securitynode.Group)
		n2 = newIdentity(p, securitynode.UserPrefix+"n2", securitynode.Group)

		By("running node agent n1 (simulated runtime) as system:node:n1")
		agent, err := node.New(node.Options{NodeName: "n1", Config: n1.config(p, cp.URL()), Runtime: simulated.New(simulated.Options{}),
			RootDir: filepath.Join(dir, "n1"), Logger: GinkgoLogr.WithName("n1")})
		Expect(err).NotTo(HaveOccurred())
		actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() { defer close(done); _ = agent.Start(actx) }()
		DeferCleanup(func() { cancel(); <-done })
	}, NodeTimeout(time.Minute))

	It("runs a Deployment's pod: the controller manager, scheduler and node agent each act as themselves", func(ctx SpecContext) {
		Expect(call(ctx, admin.http, http.MethodPost, cp.URL()+ns+"/secrets", map[string]any{
			"metadata": map[string]any{"name": "app-secret"}, "stringData": map[string]any{"token": "t0ps3cret"}}).code).To(Equal(http.StatusCreated))
		Expect(call(ctx, admin.http, http.MethodPost, cp.URL()+ns+"/secrets", map[string]any{
			"metadata": map[string]any{"name": "unrelated"}, "stringData": map[string]any{"x": "y"}}).code).To(Equal(http.StatusCreated))
		dep := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "app"},
			"spec": map[string]any{"replicas": 1, "selector": map[string]any{"matchLabels": map[string]any{"app": "app"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "app"}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "app:1",
						"envFrom": []any{map[string]any{"secretRef": map[string]any{"name": "app-secret"}}}}}}}}}
		r := call(ctx, admin.http, http.MethodPost, cp.URL()+"/apis/apps/v1/namespaces/default/deployments", dep)
		Expect(r.code).To(Equal(http.StatusCreated), r.String())

		Eventually(func(g Gomega) {
			list := call(ctx, admin.http, http.MethodGet, cp.URL()+ns+"/pods?labelSelector=app%3Dapp", nil)
			g.Expect(list.code).To(Equal(http.StatusOK))
			items, _ := list.body["items"].([]any)
			g.Expect(items).To(HaveLen(1))
			pod := items[0].(map[string]any)
			g.Expect(pod["spec"]).To(HaveKeyWithValue("nodeName", "n1"))
			g.Expect(pod["status"]).To(HaveKeyWithValue("phase", "Running"))
			podName = pod["metadata"].(map[string]any)["name"].(string)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		entries := readAudit(auditLog)
		Expect(did(entries, "system:kube-controller-manager", "create", "replicasets", "")).To(BeTrue())
		Expect(did(entries, "system:kube-controller-manager", "create", "pods", "")).To(BeTrue())
		Expect(did(entries, "system:kube-scheduler", "create", "pods", "binding")).To(BeTrue())
		Expect(did(entries, "system:node:n1", "create", "nodes", "")).To(BeTrue())
		Expect(did(entries, "system:node:n1", "get", "secrets", "")).To(BeTrue())
		Expect(did(entries, "system:node:n1", "patch", "pods", "status")).To(BeTrue())
		for _, e := range entries {
			if e.User.Username == "system:kube-controller-manager" || e.User.Username == "system:kube-scheduler" || e.User.Username == "system:node:n1" {
				Expect(e.User.Groups).NotTo(ContainElement("system:masters"))
			}
		}
	}, SpecTimeout(45*time.Second))

	It("keeps a node agent to its own node, lease, pods and their secrets", func(ctx SpecContext) {
		Expect(podName).NotTo(BeEmpty())
		pod := cp.URL() + ns + "/pods/" + podName
		mergePatch := []string{"Content-Type", "application/merge-patch+json"}

		By("n1 reads the secret its pod uses, not another one")
		Expect(call(ctx, n1.http, http.MethodGet, cp.URL()+ns+"/secrets/app-secret", nil).code).To(Equal(http.StatusOK))
		Expect(call(ctx, n1.http, http.MethodGet, cp.URL()+ns+"/secrets/unrelated", nil).code).To(Equal(http.StatusForbidden))
		Expect(call(ctx, n1.http, http.MethodGet, cp.URL()+ns+"/secrets", nil).code).To(Equal(http.StatusForbidden))

		By("n2 may not read n1's pod's secret, nor change or delete the pod")
		r := call(ctx, n2.http, http.MethodGet, cp.URL()+ns+"/secrets/app-secret", nil)
		Expect(r.code).To(Equal(http.StatusForbidden), r.String())
		Expect(r.body["message"]).To(ContainSubstring(`User "system:node:n2" cannot get resource "secrets"`))
		r = call(ctx, n2.http, http.MethodPatch, pod+"/status", `{"status":{"phase":"Failed"}}`, mergePatch...)
		Expect(r.code).To(Equal(http.StatusForbidden), r.String())
		Expect(r.body["message"]).To(ContainSubstring(`node "n2" can only update pods bound to it`))
		r = call(ctx, n2.http, http.MethodDelete, pod, nil)
		Expect(r.code).To(Equal(http.StatusForbidden), r.String())
		r = call(ctx, n2.http, http.MethodPost, pod+"/eviction", map[string]any{"apiVersion": "policy/v1", "kind": "Eviction",
			"metadata": map[string]any{"name": podName, "namespace": "default"}})
		Expect(r.code).To(Equal(http.StatusForbidden), r.String())
		r = call(ctx, n2.http, http.MethodPost, cp.URL()+ns+"/pods", map[string]any{"metadata": map[string]any{"name": "sneaky"},
			"spec": map[string]any{"nodeName": "n1", "containers": []any{map[string]any{"name": "c", "image": "x"}}}})
		Expect(r.code).To(Equal(http.StatusForbidden), r.String())
		Expect(call(ctx, n2.http, http.MethodGet, pod, nil).code).To(Equal(http.StatusOK))
		st := call(ctx, admin.http, http.MethodGet, pod, nil)
		Expect(st.body["status"]).To(HaveKeyWithValue("phase", "Running"))

		By("n2 may not touch n1's Node or Lease, but registers itself")
		r = call(ctx, n2.http, http.MethodPatch, cp.URL()+"/api/v1/nodes/n1", `{"metadata":{"labels":{"evil":"yes"}}}`, mergePatch...)
		Expect(r.code).To(Equal(http.StatusForbidden), r.String())
		r = call(ctx, n2.http, http.MethodPatch, cp.URL()+"/api/v1/nodes/n1/status", `{"status":{"phase":"Terminated"}}`, mergePatch...)
		Expect(r.code).To(Equal(http.StatusForbidden), r.String())
		r = call(ctx, n2.http, http.MethodPost, cp.URL()+"/api/v1/nodes", map[string]any{"metadata": map[string]any{"name": "n1-impostor"}})
		Expect(r.code).To(Equal(http.StatusForbidden), r.String())
		r = call(ctx, n2.http, http.MethodPatch, cp.URL()+"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1",
			`{"spec":{"holderIdentity":"n2"}}`, mergePatch...)
		Expect(r.code).To(Equal(http.StatusForbidden), r.String())
		r = call(ctx, n2.http, http.MethodPost, cp.URL()+"/api/v1/nodes", map[string]any{"metadata": map[string]any{"name": "n2",
			"labels": map[string]any{"node-restriction.kubernetes.io/trusted": "true"}}})
		Expect(r.code).To(Equal(http.StatusForbidden), r.String())
		r = call(ctx, n2.http, http.MethodPost, cp.URL()+"/api/v1/nodes", map[string]any{"metadata": map[string]any{"name": "n2"}})
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		Expect(call(ctx, n2.http, http.MethodGet, cp.URL()+"/api/v1/nodes/n1", nil).code).To(Equal(http.StatusOK))

		By("kubectl auth can-i --as a node (impersonation) answers with the Node authorizer")
		kc := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(cp.WriteKubeconfig(kc)).To(Succeed())
		canI := func(user string, args ...string) string {
			GinkgoHelper()
			out, code := kubectl(ctx, kc, append([]string{"auth", "can-i", "--as=" + user, "--as-group=system:nodes"}, args...)...)
			Expect(code).To(BeNumerically("<=", 1), out)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			return lines[len(lines)-1] // after any warning
		}
		Expect(canI("system:node:n1", "get", "secret/app-secret")).To(Equal("yes"))
		Expect(canI("system:node:n2", "get", "secret/app-secret")).To(HavePrefix("no"))
		Expect(canI("system:node:n1", "list", "secrets")).To(HavePrefix("no"))
		Expect(canI("system:node:n2", "patch", "node/n1")).To(HavePrefix("no"))
		Expect(canI("system:node:n2", "patch", "node/n2")).To(Equal("yes"))
		out, code := kubectl(ctx, kc, "get", "pods", "--as=system:node:n2", "--as-group=system:nodes", "-o", "name")
		Expect(code).To(BeZero(), out)
		Expect(out).To(ContainSubstring("pod/" + podName))
		out, code = kubectl(ctx, kc, "delete", "pod", podName, "--as=system:node:n2", "--as-group=system:nodes")
		Expect(code).NotTo(BeZero())
		Expect(out).To(ContainSubstring(`node "n2" can only delete pods bound to it`))

		By("nodes cannot act beyond their role")
		Expect(call(ctx, n2.http, http.MethodGet, cp.URL()+"/apis/apps/v1/deployments", nil).code).To(Equal(http.StatusForbidden))
		Expect(call(ctx, n1.http, http.MethodPost, cp.URL()+ns+"/pods/"+podName+"/binding", map[string]any{
			"metadata": map[string]any{"name": podName}, "target": map[string]any{"kind": "Node", "name": "n1"}}).code).To(Equal(http.StatusForbidden))
	})
})

// identityFrom is an HTTP client with join credentials.
func identityFrom(c *bootstrap.Credentials) *http.Client {
	GinkgoHelper()
	pair, err := tls.X509KeyPair(c.CertPEM, c.KeyPEM)
	Expect(err).NotTo(HaveOccurred())
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.CAPEM)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}
	DeferCleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// newCSR is a PEM certificate request for cn in orgs (base64 by JSON).
func newCSR(cn string, orgs ...string) []byte {
	GinkgoHelper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}}, key)
	Expect(err).NotTo(HaveOccurred())
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}
