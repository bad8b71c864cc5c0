package security_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	admissionregistrationv1 "github.com/converge-dev/converge/builtin/api/admissionregistration/v1"
	authenticationv1 "github.com/converge-dev/converge/builtin/api/authentication/v1"
	authorizationv1 "github.com/converge-dev/converge/builtin/api/authorization/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/builtin/security"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver"
	"github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	etcdstore "github.com/converge-dev/converge/framework/storage/etcd"
)

func TestSecurity(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "security suite")
}

// env is the secure API server every spec talks to.
type env struct {
	dir      string
	pki      *pki.PKI
	sec      *security.Security
	srv      *apiserver.Server
	ts       *httptest.Server
	auditLog string
	admin    *http.Client // client certificate converge-admin / system:masters
	anon     *http.Client
}

var e *env

// tokens: alice (bound to view later), bob (may manage roles in default), carol (nothing).
const tokenFile = `view-token,alice,1001
bob-token,bob,1002,"team-a,team-b"
carol-token,carol,1003
`

var _ = BeforeSuite(func(ctx SpecContext) {
	dir := GinkgoT().TempDir()
	e = &env{dir: dir, auditLog: filepath.Join(dir, "audit.log")}
	etcd, err := etcdstore.StartEmbedded(ctx, etcdstore.EmbeddedOptions{Dir: filepath.Join(dir, "etcd"), NoFsync: true})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = etcd.Close() })

	e.pki, err = pki.Ensure(pki.Options{Dir: filepath.Join(dir, "pki")})
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(tokenFile), 0o600)).To(Succeed())
	// The admission webhooks, read from the server's watch cache as the
	// control plane wires them.
	cached := func(ctx context.Context, gvr api.GroupVersionResource, namespace string) ([][]byte, int64, error) {
		return e.srv.CachedObjects(ctx, gvr, namespace)
	}
	warn := func(_ context.Context, text string) { GinkgoLogr.Info("Admission webhook warning", "warning", text) }
	mutating, validating := security.WebhookAdmission(cached, nil, warn)
	e.sec, err = security.New(security.Options{
		PKI: e.pki, TokenFile: filepath.Join(dir, "tokens.csv"), AuditLogPath: e.auditLog, Logger: GinkgoLogr,
		Mutating: []admission.Mutator{mutating}, Validating: []admission.Validator{validating},
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(e.sec.Close)

	reg := registry.New()
	for _, group := range [][]*registry.Resource{corev1.Resources(), rbacv1.Resources(), authorizationv1.Resources(), authenticationv1.Resources(), admissionregistrationv1.Resources()} {
		for _, r := range group {
			if r.Resource == "serviceaccounts" {
				r.Subresources = map[string]registry.Subresource{"token": e.sec.TokenRequest()}
			}
			reg.Add(r)
		}
	}
	e.srv, err = apiserver.New(apiserver.Options{Storage: etcdstore.New(etcd.Client()), Registry: reg, Logger: GinkgoLogr, Security: e.sec.APIServer()})
	Expect(err).NotTo(HaveOccurred())
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	DeferCleanup(cancel)
	e.srv.Start(runCtx)
	e.sec.Attach(e.srv)
	Expect(e.sec.Bootstrap(ctx, e.srv.Handler())).To(Succeed())
	rec := httptest.NewRecorder()
	req := httptest.NewRequestWithContext(filters.WithUser(ctx, &filters.User{Name: "test", Groups: []string{filters.GroupMasters}}),
		http.MethodPost, "/api/v1/namespaces", bytes.NewBufferString(`{"metadata":{"name":"default"}}`))
	req.Header.Set("Content-Type", "application/json")
	e.srv.Handler().ServeHTTP(rec, req)
	Expect(rec.Code).To(Equal(http.StatusCreated), rec.Body.String())

	e.ts = httptest.NewUnstartedServer(e.srv.Handler())
	e.ts.TLS = e.pki.ServerTLSConfig()
	// httptest installs its own certificate when Certificates is empty, and
	// Certificates win over GetCertificate; serve ours.
	e.ts.TLS.Certificates = []tls.Certificate{*e.pki.ServingCertificate()}
	e.ts.StartTLS()
	DeferCleanup(e.ts.Close)

	certPEM, keyPEM := e.pki.AdminCredentials()
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	Expect(err).NotTo(HaveOccurred())
	e.admin = e.client(&pair)
	e.anon = e.client(nil)
	// The authorizer reads the default bindings through the watch cache: wait
	// until it has them (system:public-info-viewer lets anyone read /healthz).
	Eventually(func(g Gomega) {
		g.Expect(do(ctx, e.anon, "", http.MethodGet, "/healthz", nil).code).To(Equal(http.StatusOK))
	}).WithTimeout(10 * time.Second).Should(Succeed())
})

func (e *env) client(cert *tls.Certificate) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.pki.CAPEM())
	tc := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
}

// response is a decoded answer.
type response struct {
	code int
	body map[string]any
	raw  string
}

func (r response) message() string { m, _ := r.body["message"].(string); return m }

// do sends a request as the admin (token "") or with a bearer token.
func do(ctx context.Context, c *http.Client, token, method, path string, body any) response {
	var rd io.Reader
	if body != nil {
		switch b := body.(type) {
		case string:
			rd = bytes.NewBufferString(b)
		default:
			js, err := json.Marshal(b)
			Expect(err).NotTo(HaveOccurred())
			rd = bytes.NewReader(js)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, e.ts.URL+path, rd)
	Expect(err).NotTo(HaveOccurred())
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	out := response{code: resp.StatusCode, raw: string(b)}
	_ = json.Unmarshal(b, &out.body)
	return out
}

func asAdmin(ctx context.Context, method, path string, body any) response {
	return do(ctx, e.admin, "", method, path, body)
}

func as(ctx context.Context, token, method, path string, body any) response {
	return do(ctx, e.anon, token, method, path, body)
}

func pod(name string, labels map[string]string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "labels": labels},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}
}

func describe(r response) string { return fmt.Sprintf("%d %s", r.code, r.raw) }
