package security

import (
	"bufio"
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

var _ = Describe("Per-user limits and API Priority and Fairness", Ordered, func() {
	var (
		cp                *controlplane.ControlPlane
		admin, alice, bob identity
		ca                *pki.PKI
	)
	const cms = "/api/v1/namespaces/default/configmaps"

	BeforeAll(func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		cp = start(ctx, controlplane.Options{DataDir: dir, Secure: true,
			MaxMutatingInFlight: 4, MaxReadOnlyInFlight: 50, MaxWatchesPerUser: 2})
		p, err := pki.Ensure(pki.Options{Dir: filepath.Join(dir, "pki")})
		Expect(err).NotTo(HaveOccurred())
		ca = p
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
		// The flow control configuration is read in the background: wait until
		// requests are classified by the stored FlowSchemas.
		Eventually(func() string {
			return call(ctx, bob.http, http.MethodGet, cp.URL()+cms, nil).header.Get("X-Kubernetes-PF-FlowSchema-UID")
		}).WithContext(ctx).ShouldNot(BeEmpty(), "the stored FlowSchemas reach the filter")
	}, NodeTimeout(time.Minute))

	It("gives one user at most its share of its priority level: its next request waits in its queue, others are served", func(ctx SpecContext) {
		wh := installHoldingWebhook(ctx, admin, cp.URL())

		By("alice holds two mutating requests: her share of global-default's five seats (54 * 20/245)")
		var wg sync.WaitGroup
		var answered [3]atomic.Int32
		create := func(i int) {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				answered[i].Store(int32(call(context.WithoutCancel(ctx), alice.http, http.MethodPost, cp.URL()+cms,
					configMap("held-"+strconv.Itoa(i), map[string]any{"hold": "yes"})).code))
			}()
		}
		create(0)
		create(1)
		Eventually(wh.held.Load).WithContext(ctx).Should(Equal(int32(2)), func() string {
			return fmt.Sprintf("alice's two creates are not both held by the webhook; answered so far: %d, %d (0: in flight)",
				answered[0].Load(), answered[1].Load())
		})

		By("her third request waits in her queue; bob's requests and the admin's are served meanwhile")
		create(2)
		r := call(ctx, bob.http, http.MethodPost, cp.URL()+cms, configMap("bob-1", nil))
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		Expect(r.header.Get("X-Kubernetes-PF-FlowSchema-UID")).To(Equal(uidOf(ctx, admin, cp.URL(), "flowschemas", "global-default")))
		Expect(r.header.Get("X-Kubernetes-PF-PriorityLevel-UID")).To(Equal(uidOf(ctx, admin, cp.URL(), "prioritylevelconfigurations", "global-default")))
		Expect(call(ctx, bob.http, http.MethodGet, cp.URL()+cms, nil).code).To(Equal(http.StatusOK))
		r = call(ctx, admin.http, http.MethodPost, cp.URL()+cms, configMap("admin-1", nil))
		Expect(r.code).To(Equal(http.StatusCreated))
		Expect(r.header.Get("X-Kubernetes-PF-FlowSchema-UID")).To(Equal(uidOf(ctx, admin, cp.URL(), "flowschemas", "exempt")))
		Consistently(answered[2].Load).WithTimeout(time.Second).Should(BeZero(), "alice's third request waits for a seat")
		Expect(wh.held.Load()).To(Equal(int32(2)), "alice's third request has not reached admission")

		close(wh.release)
		wg.Wait()
		Expect([]int32{answered[0].Load(), answered[1].Load(), answered[2].Load()}).To(Equal(
			[]int32{http.StatusCreated, http.StatusCreated, http.StatusCreated}), "every queued request is served once seats free")
	}, SpecTimeout(45*time.Second))

	It("answers 429 with Kubernetes' message to a user a custom FlowSchema routes to a Reject level", func(ctx SpecContext) {
		carol := newIdentity(ca, "carol", "devs")
		fc := cp.URL() + "/apis/flowcontrol.apiserver.k8s.io/v1/"
		r := call(ctx, admin.http, http.MethodPost, fc+"prioritylevelconfigurations", map[string]any{
			"metadata": map[string]any{"name": "one-at-a-time"},
			"spec": map[string]any{"type": "Limited", "limited": map[string]any{
				// borrowingLimitPercent 0: the level never borrows idle levels' seats.
				"nominalConcurrencyShares": 1, "borrowingLimitPercent": 0, "limitResponse": map[string]any{"type": "Reject"}}}})
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		plUID := r.body["metadata"].(map[string]any)["uid"]
		r = call(ctx, admin.http, http.MethodPost, fc+"flowschemas", map[string]any{
			"metadata": map[string]any{"name": "carol"},
			"spec": map[string]any{"priorityLevelConfiguration": map[string]any{"name": "one-at-a-time"}, "matchingPrecedence": 500,
				"distinguisherMethod": map[string]any{"type": "ByUser"},
				"rules": []any{map[string]any{
					"subjects":      []any{map[string]any{"kind": "User", "user": map[string]any{"name": "carol"}}},
					"resourceRules": []any{map[string]any{"verbs": []string{"*"}, "apiGroups": []string{"*"}, "resources": []string{"*"}, "namespaces": []string{"*"}, "clusterScope": true}},
				}}}})
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		fsUID := r.body["metadata"].(map[string]any)["uid"]
		Eventually(func() any {
			return call(ctx, carol.http, http.MethodGet, cp.URL()+cms, nil).header.Get("X-Kubernetes-PF-FlowSchema-UID")
		}).WithContext(ctx).Should(Equal(fsUID), "carol's requests are classified by her FlowSchema")
		Eventually(func() string { return danglingOf(ctx, admin, fc+"flowschemas/carol") }).WithContext(ctx).Should(
			Equal(`False Found This FlowSchema references the PriorityLevelConfiguration object named "one-at-a-time" and it exists`))

		By("carol holds the level's only seat; her next request is rejected at once")
		wh := installHoldingWebhook(ctx, admin, cp.URL())
		done := make(chan int, 1)
		go func() {
			defer GinkgoRecover()
			done <- call(context.WithoutCancel(ctx), carol.http, http.MethodPost, cp.URL()+cms, configMap("carol-held", map[string]any{"hold": "yes"})).code
		}()
		Eventually(wh.held.Load).WithContext(ctx).Should(Equal(int32(1)))
		r = call(ctx, carol.http, http.MethodGet, cp.URL()+cms, nil)
		Expect(r.code).To(Equal(http.StatusTooManyRequests), r.String())
		Expect(r.header.Get("Retry-After")).To(Equal("1"))
		Expect(r.body["message"]).To(Equal("Too many requests, please try again later."))
		Expect(r.header.Get("X-Kubernetes-PF-FlowSchema-UID")).To(Equal(fsUID))
		Expect(r.header.Get("X-Kubernetes-PF-PriorityLevel-UID")).To(Equal(plUID))
		Expect(call(ctx, bob.http, http.MethodGet, cp.URL()+cms, nil).code).To(Equal(http.StatusOK), "other users are not affected")
		close(wh.release)
		Expect(<-done).To(Equal(http.StatusCreated))

		By("without its level the FlowSchema is Dangling and matches nothing")
		Expect(call(ctx, admin.http, http.MethodDelete, fc+"prioritylevelconfigurations/one-at-a-time", nil).code).To(Equal(http.StatusOK))
		Eventually(func() string { return danglingOf(ctx, admin, fc+"flowschemas/carol") }).WithContext(ctx).Should(
			Equal(`True NotFound This FlowSchema references the PriorityLevelConfiguration object named "one-at-a-time" but there is no such object`))
		Eventually(func() any {
			return call(ctx, carol.http, http.MethodGet, cp.URL()+cms, nil).header.Get("X-Kubernetes-PF-FlowSchema-UID")
		}).WithContext(ctx).Should(Equal(uidOf(ctx, admin, cp.URL(), "flowschemas", "global-default")))
		Expect(call(ctx, admin.http, http.MethodDelete, fc+"flowschemas/carol", nil).code).To(Equal(http.StatusOK))
	}, SpecTimeout(45*time.Second))

	It("keeps the default configuration: mandatory objects restored, autoupdate-spec honoured", func(ctx SpecContext) {
		fc := cp.URL() + "/apis/flowcontrol.apiserver.k8s.io/v1/"
		r := call(ctx, admin.http, http.MethodGet, fc+"flowschemas", nil)
		Expect(r.code).To(Equal(http.StatusOK))
		var names []string
		for _, it := range r.body["items"].([]any) {
			m := it.(map[string]any)["metadata"].(map[string]any)
			names = append(names, m["name"].(string))
			Expect(m["annotations"]).To(HaveKeyWithValue("apf.kubernetes.io/autoupdate-spec", "true"))
		}
		Expect(names).To(ContainElements("exempt", "catch-all", "probes", "system-leader-election", "endpoint-controller",
			"workload-leader-election", "system-node-high", "system-nodes", "kube-controller-manager", "kube-scheduler",
			"kube-system-service-accounts", "service-accounts", "global-default"))

		By("a deleted mandatory FlowSchema comes back")
		old := uidOf(ctx, admin, cp.URL(), "flowschemas", "catch-all")
		Expect(call(ctx, admin.http, http.MethodDelete, fc+"flowschemas/catch-all", nil).code).To(Equal(http.StatusOK))
		Eventually(func() string { return uidOf(ctx, admin, cp.URL(), "flowschemas", "catch-all") }).WithContext(ctx).ShouldNot(
			Or(BeEmpty(), Equal(old)))

		By("a changed mandatory level is restored")
		r = call(ctx, admin.http, http.MethodPatch, fc+"prioritylevelconfigurations/catch-all",
			`{"spec":{"limited":{"nominalConcurrencyShares":50}}}`, "Content-Type", "application/merge-patch+json")
		Expect(r.code).To(Equal(http.StatusOK), r.String())
		Eventually(func() any { return sharesOf(ctx, admin, fc+"prioritylevelconfigurations/catch-all") }).WithContext(ctx).Should(BeEquivalentTo(5))

		By("a suggested level the users own (autoupdate-spec false) keeps their change; with true it is restored")
		r = call(ctx, admin.http, http.MethodPatch, fc+"prioritylevelconfigurations/workload-low",
			`{"metadata":{"annotations":{"apf.kubernetes.io/autoupdate-spec":"false"}},"spec":{"limited":{"nominalConcurrencyShares":7}}}`,
			"Content-Type", "application/merge-patch+json")
		Expect(r.code).To(Equal(http.StatusOK), r.String())
		Consistently(func() any { return sharesOf(ctx, admin, fc+"prioritylevelconfigurations/workload-low") }).WithTimeout(time.Second).Should(BeEquivalentTo(7))
		r = call(ctx, admin.http, http.MethodPatch, fc+"prioritylevelconfigurations/workload-low",
			`{"metadata":{"annotations":{"apf.kubernetes.io/autoupdate-spec":"true"}}}`, "Content-Type", "application/merge-patch+json")
		Expect(r.code).To(Equal(http.StatusOK), r.String())
		Eventually(func() any { return sharesOf(ctx, admin, fc+"prioritylevelconfigurations/workload-low") }).WithContext(ctx).Should(BeEquivalentTo(100))
	}, SpecTimeout(45*time.Second))

	It("holds a watch's seat only until its initial events are sent", func(ctx SpecContext) {
		// bob's flow may hold two of global-default's seats: were his two
		// running watches still holding theirs, his list would wait in his
		// queue (up to 15 s) instead of being answered at once.
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		for range 2 {
			req, err := http.NewRequestWithContext(wctx, http.MethodGet, cp.URL()+cms+"?watch=1&resourceVersion=0&timeoutSeconds=60", nil)
			Expect(err).NotTo(HaveOccurred())
			resp, err := bob.http.Do(req)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(resp.Body.Close)
			Expect(resp.StatusCode).To(Equal(http.StatusOK))
			// The initial events (the configmaps stored so far) arrive.
			line, err := bufio.NewReader(resp.Body).ReadString('\n')
			Expect(err).NotTo(HaveOccurred())
			Expect(line).To(ContainSubstring(`"type":"ADDED"`))
		}
		start := time.Now()
		Expect(call(ctx, bob.http, http.MethodGet, cp.URL()+cms, nil).code).To(Equal(http.StatusOK))
		Expect(time.Since(start)).To(BeNumerically("<", 5*time.Second), "bob's list waited for a seat his watches hold")
		cancel()
		Eventually(func() int {
			return call(ctx, bob.http, http.MethodGet, cp.URL()+cms+"?watch=1&timeoutSeconds=1", nil).code
		}).WithContext(ctx).Should(Equal(http.StatusOK), "closed watches give their slots back")
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

// installHoldingWebhook registers a webhook holding configmap creates
// labelled hold=yes, and waits until it is called.
func installHoldingWebhook(ctx context.Context, admin identity, url string) *holdingWebhook {
	GinkgoHelper()
	wh := newHoldingWebhook()
	name := "hold-" + strconv.Itoa(int(time.Now().UnixNano()%1e9))
	r := call(ctx, admin.http, http.MethodPost, url+"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", map[string]any{
		"metadata": map[string]any{"name": name},
		"webhooks": []any{map[string]any{
			"name": "hold.converge.dev", "clientConfig": map[string]any{"url": wh.url, "caBundle": wh.ca},
			"rules":       []any{map[string]any{"operations": []string{"CREATE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"configmaps"}}},
			"sideEffects": "None", "admissionReviewVersions": []string{"v1"}, "timeoutSeconds": 30,
		}}})
	Expect(r.code).To(Equal(http.StatusCreated), r.String())
	DeferCleanup(func(ctx context.Context) {
		call(ctx, admin.http, http.MethodDelete, url+"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"+name, nil)
	})
	probe := 0
	Eventually(func() int32 {
		probe++
		call(ctx, admin.http, http.MethodPost, url+"/api/v1/namespaces/default/configmaps",
			configMap(name+"-probe-"+strconv.Itoa(probe), map[string]any{"probe": "yes"}))
		return wh.probes.Load()
	}).WithContext(ctx).Should(BeNumerically(">", 0))
	return wh
}

// uidOf is the UID of a flowcontrol object ("" when it does not exist).
func uidOf(ctx context.Context, admin identity, url, resource, name string) string {
	GinkgoHelper()
	r := call(ctx, admin.http, http.MethodGet, url+"/apis/flowcontrol.apiserver.k8s.io/v1/"+resource+"/"+name, nil)
	if r.code != http.StatusOK {
		return ""
	}
	uid, _ := r.body["metadata"].(map[string]any)["uid"].(string)
	return uid
}

// danglingOf is a FlowSchema's Dangling condition as "status reason message".
func danglingOf(ctx context.Context, admin identity, url string) string {
	GinkgoHelper()
	r := call(ctx, admin.http, http.MethodGet, url, nil)
	st, _ := r.body["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == "Dangling" {
			return fmt.Sprintf("%v %v %v", m["status"], m["reason"], m["message"])
		}
	}
	return ""
}

// sharesOf is a limited level's nominalConcurrencyShares.
func sharesOf(ctx context.Context, admin identity, url string) any {
	GinkgoHelper()
	r := call(ctx, admin.http, http.MethodGet, url, nil)
	spec, _ := r.body["spec"].(map[string]any)
	limited, _ := spec["limited"].(map[string]any)
	return limited["nominalConcurrencyShares"]
}
