package v1_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/fields"
	"github.com/converge-dev/converge/framework/client"
)

// agentless is a Node object no agent runs: pods bound to it stay Terminating
// until a DELETE with a grace of 0, as on Kubernetes.
const agentless = "agentless"

var _ = BeforeEach(func(ctx SpecContext) {
	n := &corev1.Node{}
	n.Name = agentless
	if err := suite.c.Create(ctx, n); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
})

// newPod creates a pod in default bound to nodeName ("" for none).
func newPod(ctx context.Context, name, nodeName string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	GinkgoHelper()
	p := &corev1.Pod{}
	p.Namespace, p.Name = "default", name
	p.Spec.NodeName = nodeName
	p.Spec.Containers = []corev1.Container{{Name: "main", Image: "example/app:1"}}
	for _, m := range mutate {
		m(p)
	}
	Expect(suite.c.Create(ctx, p)).To(Succeed())
	return p
}

// deletePod sends DELETE with query and body and returns the status code and
// the decoded response.
func deletePod(ctx context.Context, name, query, body string) (int, map[string]any) {
	GinkgoHelper()
	path := "/api/v1/namespaces/default/pods/" + name
	if query != "" {
		path += "?" + query
	}
	return send(ctx, http.MethodDelete, path, body)
}

// send sends method to path with body (JSON, if any) and returns the status
// code and the decoded response.
func send(ctx context.Context, method, path, body string) (int, map[string]any) {
	GinkgoHelper()
	return sendAs(ctx, method, path, "application/json", []byte(body))
}

// sendAs sends body with Content-Type ctype and returns the status code and
// the decoded JSON response.
func sendAs(ctx context.Context, method, path, ctype string, body []byte) (int, map[string]any) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, method, suite.env.URL+path, bytes.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	if len(body) > 0 {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	out := map[string]any{}
	Expect(json.Unmarshal(b, &out)).To(Succeed(), string(b))
	return resp.StatusCode, out
}

func getPod(ctx context.Context, name string) (*corev1.Pod, error) {
	p := &corev1.Pod{}
	return p, suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, p)
}

func gone(ctx context.Context, name string) bool {
	_, err := getPod(ctx, name)
	return apierrors.IsNotFound(err)
}

// deletionOf returns the deletion timestamp and grace of a DELETE response.
func deletionOf(obj map[string]any) (time.Time, int64) {
	GinkgoHelper()
	ts, err := time.Parse(time.RFC3339, api.NestedString(obj, "metadata", "deletionTimestamp"))
	Expect(err).NotTo(HaveOccurred(), "deletionTimestamp of %v", obj["metadata"])
	g, ok := api.NestedInt64(obj, "metadata", "deletionGracePeriodSeconds")
	if !ok {
		f, _ := api.NestedField(obj, "metadata", "deletionGracePeriodSeconds")
		n, isNum := f.(float64)
		Expect(isNum).To(BeTrue(), "deletionGracePeriodSeconds of %v", obj["metadata"])
		g = int64(n)
	}
	return ts, g
}

var _ = Describe("Graceful pod deletion", func() {
	It("marks a bound pod with its terminationGracePeriodSeconds, shows it Terminating, and removes it on a zero-grace DELETE", func(ctx SpecContext) {
		w, err := suite.c.Watch(ctx, &corev1.PodList{}, client.InNamespace("default"),
			&client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "graceful")})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		newPod(ctx, "graceful", agentless, func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = api.Ptr(int64(45)) })
		before := time.Now().Truncate(time.Second)
		code, obj := deletePod(ctx, "graceful", "", "")
		Expect(code).To(Equal(http.StatusOK))
		Expect(obj["kind"]).To(Equal("Pod"), "a graceful DELETE returns the object")
		ts, grace := deletionOf(obj)
		Expect(grace).To(Equal(int64(45)))
		Expect(ts).To(BeTemporally(">=", before.Add(45*time.Second)))
		Expect(ts).To(BeTemporally("<=", time.Now().Add(46*time.Second)))

		By("keeping the pod through status writes during its grace period")
		p, err := getPod(ctx, "graceful")
		Expect(err).NotTo(HaveOccurred())
		Expect(p.DeletionTimestamp).NotTo(BeNil())
		patch := []byte(`{"status":{"phase":"Running"}}`)
		Expect(suite.c.Status().Patch(ctx, p, client.RawPatch(client.MergePatchType, patch))).To(Succeed())
		Expect(gone(ctx, "graceful")).To(BeFalse())

		By("printing Terminating in the Table's STATUS column")
		Expect(tableStatus(ctx, "graceful")).To(Equal("Terminating"))

		By("deleting it on a DELETE with gracePeriodSeconds=0 and the UID precondition")
		uid := string(p.UID)
		Expect(suite.c.Delete(ctx, p, client.GracePeriodSeconds(0), client.Preconditions{UID: &uid})).To(Succeed())
		Expect(gone(ctx, "graceful")).To(BeTrue())

		By("showing ADDED, MODIFIED with the deletionTimestamp, then DELETED to watchers")
		var types []client.EventType
		sawMark := false
		Eventually(func() []client.EventType {
			for {
				select {
				case ev := <-w.ResultChan():
					if ev.Type == client.Bookmark {
						continue
					}
					types = append(types, ev.Type)
					if pp, ok := ev.Object.(*corev1.Pod); ok && ev.Type == client.Modified && pp.DeletionTimestamp != nil {
						sawMark = true
					}
				default:
					return types
				}
			}
		}).WithContext(ctx).Should(ContainElement(client.Deleted))
		Expect(types[0]).To(Equal(client.Added))
		Expect(types[len(types)-1]).To(Equal(client.Deleted))
		Expect(sawMark).To(BeTrue(), "events: %v", types)
	}, SpecTimeout(30*time.Second))

	It("takes the grace period from the request's query or body over the pod's", func(ctx SpecContext) {
		newPod(ctx, "by-query", agentless)
		code, obj := deletePod(ctx, "by-query", "gracePeriodSeconds=7", "")
		Expect(code).To(Equal(http.StatusOK))
		_, grace := deletionOf(obj)
		Expect(grace).To(Equal(int64(7)))

		newPod(ctx, "by-body", agentless)
		code, obj = deletePod(ctx, "by-body", "", `{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":9}`)
		Expect(code).To(Equal(http.StatusOK))
		_, grace = deletionOf(obj)
		Expect(grace).To(Equal(int64(9)))

		By("defaulting terminationGracePeriodSeconds to 30")
		newPod(ctx, "by-default", agentless)
		_, obj = deletePod(ctx, "by-default", "", "")
		_, grace = deletionOf(obj)
		Expect(grace).To(Equal(int64(30)))
		for _, n := range []string{"by-query", "by-body", "by-default"} {
			_, _ = deletePod(ctx, n, "gracePeriodSeconds=0", "")
			Expect(gone(ctx, n)).To(BeTrue())
		}
	}, SpecTimeout(30*time.Second))

	It("lets a second DELETE only shorten the grace period", func(ctx SpecContext) {
		newPod(ctx, "shorten", agentless)
		_, obj := deletePod(ctx, "shorten", "gracePeriodSeconds=60", "")
		ts60, grace := deletionOf(obj)
		Expect(grace).To(Equal(int64(60)))

		By("ignoring a longer and an absent grace period")
		_, obj = deletePod(ctx, "shorten", "gracePeriodSeconds=120", "")
		ts, grace := deletionOf(obj)
		Expect(grace).To(Equal(int64(60)))
		Expect(ts).To(Equal(ts60))
		_, obj = deletePod(ctx, "shorten", "", "")
		ts, grace = deletionOf(obj)
		Expect(grace).To(Equal(int64(60)))
		Expect(ts).To(Equal(ts60))

		By("moving the deadline earlier for a shorter one")
		_, obj = deletePod(ctx, "shorten", "gracePeriodSeconds=20", "")
		ts, grace = deletionOf(obj)
		Expect(grace).To(Equal(int64(20)))
		Expect(ts).To(Equal(ts60.Add(-40 * time.Second)))
		p, err := getPod(ctx, "shorten")
		Expect(err).NotTo(HaveOccurred())
		Expect(*p.DeletionGracePeriodSeconds).To(Equal(int64(20)))

		By("deleting at once for a grace of 0")
		code, obj := deletePod(ctx, "shorten", "gracePeriodSeconds=0", "")
		Expect(code).To(Equal(http.StatusOK))
		Expect(obj["kind"]).To(Equal("Status"))
		Expect(gone(ctx, "shorten")).To(BeTrue())
	}, SpecTimeout(30*time.Second))

	It("deletes at once with gracePeriodSeconds=0 (kubectl --force --grace-period=0)", func(ctx SpecContext) {
		newPod(ctx, "forced", agentless)
		code, obj := deletePod(ctx, "forced", "", `{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"propagationPolicy":"Background"}`)
		Expect(code).To(Equal(http.StatusOK))
		Expect(obj["kind"]).To(Equal("Status"))
		Expect(gone(ctx, "forced")).To(BeTrue())
	}, SpecTimeout(30*time.Second))

	It("deletes unbound and finished pods at once", func(ctx SpecContext) {
		newPod(ctx, "unbound", "")
		code, obj := deletePod(ctx, "unbound", "", "")
		Expect(code).To(Equal(http.StatusOK))
		Expect(obj["kind"]).To(Equal("Status"))
		Expect(gone(ctx, "unbound")).To(BeTrue())

		for _, phase := range []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed} {
			name := "finished-" + strings.ToLower(string(phase))
			p := newPod(ctx, name, agentless)
			patch := []byte(fmt.Sprintf(`{"status":{"phase":%q}}`, phase))
			Expect(suite.c.Status().Patch(ctx, p, client.RawPatch(client.MergePatchType, patch))).To(Succeed())
			_, obj = deletePod(ctx, name, "", "")
			Expect(obj["kind"]).To(Equal("Status"), "a %s pod", phase)
			Expect(gone(ctx, name)).To(BeTrue())
		}

	}, SpecTimeout(30*time.Second))

	It("marks a pod bound to a node that does not exist like any bound pod (the pod GC finishes it)", func(ctx SpecContext) {
		newPod(ctx, "nodeless", "no-such-node")
		code, obj := deletePod(ctx, "nodeless", "", "")
		Expect(code).To(Equal(http.StatusOK))
		Expect(obj["kind"]).To(Equal("Pod"))
		ts, grace := deletionOf(obj)
		Expect(grace).To(Equal(int64(corev1.DefaultTerminationGracePeriodSeconds)))
		Expect(ts).To(BeTemporally(">", time.Now()))
		Expect(gone(ctx, "nodeless")).To(BeFalse())

		By("force-deleting it, as builtin/controllers/podgc does (no controller runs in this suite)")
		code, obj = deletePod(ctx, "nodeless", "gracePeriodSeconds=0", "")
		Expect(code).To(Equal(http.StatusOK))
		Expect(obj["kind"]).To(Equal("Status"))
		Expect(gone(ctx, "nodeless")).To(BeTrue())
	}, SpecTimeout(30*time.Second))

	It("keeps a pod with finalizers after its grace until the finalizers are gone", func(ctx SpecContext) {
		newPod(ctx, "finalized", agentless, func(p *corev1.Pod) { p.Finalizers = []string{"example.com/hold"} })
		_, obj := deletePod(ctx, "finalized", "gracePeriodSeconds=30", "")
		_, grace := deletionOf(obj)
		Expect(grace).To(Equal(int64(30)))
		Expect(api.NestedSlice(obj, "metadata", "finalizers")).To(ConsistOf("example.com/hold"))

		By("cutting the grace to 0 without removing the pod")
		code, obj := deletePod(ctx, "finalized", "gracePeriodSeconds=0", "")
		Expect(code).To(Equal(http.StatusOK))
		Expect(obj["kind"]).To(Equal("Pod"))
		ts, grace := deletionOf(obj)
		Expect(grace).To(Equal(int64(0)))
		Expect(ts).To(BeTemporally("<=", time.Now()))
		Expect(gone(ctx, "finalized")).To(BeFalse())

		By("removing it with its last finalizer")
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		p := &corev1.Pod{}
		p.Namespace, p.Name = "default", "finalized"
		Expect(suite.c.Patch(ctx, p, client.RawPatch(client.MergePatchType, patch))).To(Succeed())
		Expect(gone(ctx, "finalized")).To(BeTrue())

		By("marking an unbound pod with finalizers without grace, as any object")
		newPod(ctx, "finalized-unbound", "", func(p *corev1.Pod) { p.Finalizers = []string{"example.com/hold"} })
		_, obj = deletePod(ctx, "finalized-unbound", "", "")
		_, grace = deletionOf(obj)
		Expect(grace).To(Equal(int64(0)))
		p.Name = "finalized-unbound"
		Expect(suite.c.Patch(ctx, p, client.RawPatch(client.MergePatchType, patch))).To(Succeed())
		Expect(gone(ctx, "finalized-unbound")).To(BeTrue())
	}, SpecTimeout(30*time.Second))
})

// tableStatus returns the STATUS cell of the pod in a Table GET.
func tableStatus(ctx context.Context, name string) string {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, suite.env.URL+"/api/v1/namespaces/default/pods/"+name, nil)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	var table struct {
		Columns []struct {
			Name string `json:"name"`
		} `json:"columnDefinitions"`
		Rows []struct {
			Cells []any `json:"cells"`
		} `json:"rows"`
	}
	Expect(json.NewDecoder(resp.Body).Decode(&table)).To(Succeed())
	Expect(table.Rows).To(HaveLen(1))
	for i, c := range table.Columns {
		if c.Name == "Status" {
			s, _ := table.Rows[0].Cells[i].(string)
			return s
		}
	}
	Fail("no Status column")
	return ""
}
