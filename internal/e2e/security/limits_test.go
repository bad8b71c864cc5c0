package security

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/controlplane"
)

// holdingWebhook admits every request, holding those for objects labelled
// hold=yes until release is closed.
type holdingWebhook struct {
	held, probes atomic.Int32
	release      chan struct{}
	url, ca      string
}

func newHoldingWebhook() *holdingWebhook {
	h := &holdingWebhook{release: make(chan struct{})}
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Request struct {
				UID    string `json:"uid"`
				Object struct {
					Metadata struct {
						Labels map[string]string `json:"labels"`
					} `json:"metadata"`
				} `json:"object"`
			} `json:"request"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &in)
		labels := in.Request.Object.Metadata.Labels
		if labels["probe"] == "yes" {
			h.probes.Add(1)
		}
		if labels["hold"] == "yes" {
			h.held.Add(1)
			<-h.release
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
			"response": map[string]any{"uid": in.Request.UID, "allowed": true}})
	}))
	DeferCleanup(ts.Close)
	DeferCleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
	})
	h.url = ts.URL
	h.ca = base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}))
	return h
}

func configMap(name string, labels map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "labels": labels}}
}

var _ = Describe("Per-user limits", Ordered, func() {
	var (
		cp                *controlplane.ControlPlane
		admin, alice, bob identity
	)
	const cms = "/api/v1/namespaces/default/configmaps"

	BeforeAll(func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		cp = start(ctx, controlplane.Options{DataDir: dir, Secure: true,
			MaxMutatingInFlight: 4, MaxReadOnlyInFlight: 50, MaxWatchesPerUser: 2})
		p, err := pki.Ensure(pki.Options{Dir: filepath.Join(dir, "pki")})
		Expect(err).NotTo(HaveOccurred())
		admin = newIdentity(p, "test-admin", "system:masters")
		alice = newIdentity(p, "alice", "devs")
		bob = newIdentity(p, "bob", "devs")
		r := call(ctx, admin.http, http.MethodPost, cp.URL()+"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", map[string]any{
			"metadata": map[string]any{"name": "devs-edit"},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
			"subjects": []any{map[string]any{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "devs"}}})
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		// The authorizer reads bindings from its cache: wait until it has this
		// one, or the devs' first creates are refused (403, not held).
		Eventually(func() int {
			return call(ctx, alice.http, http.MethodPost, cp.URL()+cms+"?dryRun=All", configMap("rbac-ready", nil)).code
		}).WithContext(ctx).Should(Equal(http.StatusCreated), "the devs-edit binding reaches the authorizer")
	}, NodeTimeout(time.Minute))

	It("gives one user at most its share of the in-flight budget: 429 for it, others still served", func(ctx SpecContext) {
		wh := newHoldingWebhook()
		r := call(ctx, admin.http, http.MethodPost, cp.URL()+"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", map[string]any{
			"metadata": map[string]any{"name": "hold"},
			"webhooks": []any{map[string]any{
				"name": "hold.converge.dev", "clientConfig": map[string]any{"url": wh.url, "caBundle": wh.ca},
				"rules":       []any{map[string]any{"operations": []string{"CREATE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"configmaps"}}},
				"sideEffects": "None", "admissionReviewVersions": []string{"v1"}, "timeoutSeconds": 30,
			}}})
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		probe := 0
		Eventually(func() int32 {
			probe++
			call(ctx, admin.http, http.MethodPost, cp.URL()+cms, configMap("probe-"+strconv.Itoa(probe), map[string]any{"probe": "yes"}))
			return wh.probes.Load()
		}).WithContext(ctx).Should(BeNumerically(">", 0))

		By("alice holds two mutating requests: her share of a budget of four")
		var wg sync.WaitGroup
		var answered [2]atomic.Int32
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				answered[i].Store(int32(call(context.WithoutCancel(ctx), alice.http, http.MethodPost, cp.URL()+cms,
					configMap("held-"+strconv.Itoa(i), map[string]any{"hold": "yes"})).code))
			}()
		}
		Eventually(wh.held.Load).WithContext(ctx).Should(Equal(int32(2)), func() string {
			return fmt.Sprintf("alice's two creates are not both held by the webhook; answered so far: %d, %d (0: in flight)",
				answered[0].Load(), answered[1].Load())
		})

		r = call(ctx, alice.http, http.MethodPost, cp.URL()+cms, configMap("alice-third", nil))
		Expect(r.code).To(Equal(http.StatusTooManyRequests), r.String())
		Expect(r.header.Get("Retry-After")).To(Equal("1"))
		Expect(r.body["message"]).To(Equal("Too many requests, please try again later."))
		Expect(call(ctx, alice.http, http.MethodGet, cp.URL()+cms, nil).code).To(Equal(http.StatusOK), "reads have their own budget")

		r = call(ctx, bob.http, http.MethodPost, cp.URL()+cms, configMap("bob-1", nil))
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		Expect(call(ctx, admin.http, http.MethodPost, cp.URL()+cms, configMap("admin-1", nil)).code).To(Equal(http.StatusCreated))

		close(wh.release)
		wg.Wait()
		Expect([]int32{answered[0].Load(), answered[1].Load()}).To(Equal([]int32{http.StatusCreated, http.StatusCreated}))
		Expect(call(ctx, alice.http, http.MethodPost, cp.URL()+cms, configMap("alice-third", nil)).code).To(Equal(http.StatusCreated))
	}, SpecTimeout(45*time.Second))

	It("limits the open watches of each user", func(ctx SpecContext) {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		watch := func(c *http.Client) *http.Response {
			GinkgoHelper()
			req, err := http.NewRequestWithContext(wctx, http.MethodGet, cp.URL()+cms+"?watch=1&timeoutSeconds=60", nil)
			Expect(err).NotTo(HaveOccurred())
			resp, err := c.Do(req)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(resp.Body.Close)
			return resp
		}
		Expect(watch(alice.http).StatusCode).To(Equal(http.StatusOK))
		Expect(watch(alice.http).StatusCode).To(Equal(http.StatusOK))
		third := watch(alice.http)
		Expect(third.StatusCode).To(Equal(http.StatusTooManyRequests))
		Expect(third.Header.Get("Retry-After")).To(Equal("1"))
		Expect(watch(bob.http).StatusCode).To(Equal(http.StatusOK))
		Expect(watch(admin.http).StatusCode).To(Equal(http.StatusOK))
		cancel()
		Eventually(func() int {
			r := call(ctx, alice.http, http.MethodGet, cp.URL()+cms+"?watch=1&timeoutSeconds=1", nil)
			return r.code
		}).WithContext(ctx).Should(Equal(http.StatusOK), "closed watches give their slots back")
	}, SpecTimeout(45*time.Second))
})
