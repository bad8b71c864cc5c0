package node_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// hookServer records the paths lifecycle hooks requested.
type hookServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newHookServer() *hookServer {
	h := &hookServer{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.paths = append(h.paths, r.URL.Path)
		h.mu.Unlock()
	}))
	DeferCleanup(h.Close)
	return h
}

func (h *hookServer) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.paths...)
}

func (h *hookServer) action(path string) *corev1.HTTPGetAction {
	host, port, _ := net.SplitHostPort(h.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	return &corev1.HTTPGetAction{Host: host, Path: path, Port: api.FromInt(p)}
}

func eventReasons(ctx SpecContext, pod string) []string {
	evs := &corev1.EventList{}
	Expect(suite.c.List(ctx, evs, client.InNamespace("default"))).To(Succeed())
	var out []string
	for _, e := range evs.Items {
		if e.InvolvedObject.Name == pod {
			out = append(out, e.Reason)
		}
	}
	return out
}

var _ = Describe("Lifecycle hooks", func() {
	It("runs postStart (exec and httpGet) after the start and preStop (httpGet) on deletion", func(ctx SpecContext) {
		hooks := newHookServer()
		marker := GinkgoT().TempDir() + "/post-start"
		pod := &corev1.Pod{}
		pod.Name = "hooks"
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(5))
		exec := helperContainer("exec", "out", "up", "sleep", "forever")
		exec.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{suite.helper, "write", marker, "done"}}}}
		web := helperContainer("web", "sleep", "forever")
		web.Lifecycle = &corev1.Lifecycle{
			PostStart: &corev1.LifecycleHandler{HTTPGet: hooks.action("/post-start")},
			PreStop:   &corev1.LifecycleHandler{HTTPGet: hooks.action("/pre-stop")},
		}
		slow := helperContainer("slow", "sleep", "forever")
		slow.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 2}}}
		pod.Spec.Containers = []corev1.Container{exec, web, slow}
		createAndBind(ctx, pod)
		By("a container shows ContainerCreating while its postStart hook runs")
		Eventually(func(g Gomega) {
			p, err := getPod(ctx, "hooks")()
			g.Expect(err).NotTo(HaveOccurred())
			s := status(p, "slow")
			g.Expect(s.ContainerID).NotTo(BeEmpty())
			g.Expect(s.State.Waiting).NotTo(BeNil())
			g.Expect(s.State.Waiting.Reason).To(Equal("ContainerCreating"))
		}).WithContext(ctx).WithTimeout(20 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
		Eventually(func(g Gomega) {
			p, err := getPod(ctx, "hooks")()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cond(p, corev1.PodReady)).To(Equal(corev1.ConditionTrue))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(marker).To(BeAnExistingFile())
		Expect(hooks.seen()).To(Equal([]string{"/post-start"}))
		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
		Eventually(hooks.seen).WithContext(ctx).WithTimeout(10 * time.Second).Should(Equal([]string{"/post-start", "/pre-stop"}))
		Eventually(func() error { _, err := getPod(ctx, "hooks")(); return err }).WithContext(ctx).WithTimeout(15 * time.Second).
			Should(MatchError(ContainSubstring("not found")))
	}, SpecTimeout(60*time.Second))

	It("kills a container whose postStart hook fails, with a FailedPostStartHook event, and restarts it", func(ctx SpecContext) {
		pod := &corev1.Pod{}
		pod.Name = "badhook"
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(1))
		c := helperContainer("main", "sleep", "forever")
		c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{suite.helper, "out", "nope", "exit", "3"}}}}
		pod.Spec.Containers = []corev1.Container{c}
		createAndBind(ctx, pod)
		Eventually(func(g Gomega) {
			p, err := getPod(ctx, "badhook")()
			g.Expect(err).NotTo(HaveOccurred())
			s := status(p, "main")
			g.Expect(s.RestartCount).To(BeNumerically(">=", 1))
			g.Expect(s.LastTerminationState.Terminated).NotTo(BeNil())
			g.Expect(s.LastTerminationState.Terminated.ExitCode).To(BeEquivalentTo(143))
			g.Expect(eventReasons(ctx, "badhook")).To(ContainElement("FailedPostStartHook"))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(suite.c.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	}, SpecTimeout(60*time.Second))
})
