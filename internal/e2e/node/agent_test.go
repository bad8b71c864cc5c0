package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/cri/process"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// The test binary doubles as a standalone node agent (like `converge node`) so
// a spec can SIGKILL it and start it again.
const (
	agentEnv     = "CONVERGE_E2E_AGENT"      // the API server URL
	agentNodeEnv = "CONVERGE_E2E_AGENT_NODE" // node name
	agentRootEnv = "CONVERGE_E2E_AGENT_ROOT" // root dir
	agentCIDREnv = "CONVERGE_E2E_AGENT_CIDR" // pod CIDR
)

func TestMain(m *testing.M) {
	if url := os.Getenv(agentEnv); url != "" {
		os.Exit(runAgent(url))
	}
	os.Exit(m.Run())
}

// runAgent runs a node agent on the process runtime until SIGTERM.
func runAgent(url string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	log := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	root := os.Getenv(agentRootEnv)
	rt := process.New(process.Options{StateDir: filepath.Join(root, "containers"), Logger: log.WithName("runtime")})
	a, err := node.New(node.Options{NodeName: os.Getenv(agentNodeEnv), Config: &client.Config{Host: url}, Runtime: rt,
		RootDir: root, PodCIDR: os.Getenv(agentCIDREnv), Logger: log, CrashLoopBackOffBase: time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := a.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// agentProcess is a node agent running as a child process.
type agentProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startAgent(name, root, cidr string) *agentProcess {
	GinkgoHelper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), agentEnv+"="+suite.env.URL, agentNodeEnv+"="+name, agentRootEnv+"="+root, agentCIDREnv+"="+cidr)
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	Expect(cmd.Start()).To(Succeed())
	p := &agentProcess{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p
}

func (p *agentProcess) signal(sig syscall.Signal) {
	GinkgoHelper()
	_ = p.cmd.Process.Signal(sig)
	Eventually(p.done).WithTimeout(30 * time.Second).Should(BeClosed())
}

// processesOn lists the podserver processes serving on ip.
func processesOn(ip string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) > 1 && args[0] == suite.server && strings.HasPrefix(args[1], "--listen="+ip+":") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// alive reports whether pid runs (exists and is not a zombie: an orphaned
// container is reaped by whatever PID 1 is, maybe never).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z' && b[i+2] != 'X'
}

func getPodE2E(ctx context.Context, name string) (*corev1.Pod, error) {
	p := &corev1.Pod{}
	err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, p)
	return p, err
}

var _ = Describe("Node agent restart", func() {
	It("re-adopts running containers, reports the ones that died meanwhile and stops orphans", func(ctx SpecContext) {
		const nodeName = "restart-node"
		root := GinkgoT().TempDir()
		agent := startAgent(nodeName, root, "127.11.0.0/16")
		DeferCleanup(func(ctx context.Context) {
			// The scheduler must not pick the stopped node for later specs.
			n := &corev1.Node{}
			n.Name = nodeName
			Expect(client.IgnoreNotFound(suite.c.Delete(ctx, n))).To(Succeed())
		})
		DeferCleanup(func() {
			select {
			case <-agent.done:
			default:
				agent.signal(syscall.SIGTERM)
			}
		})

		By("running three pods on the agent")
		names := []string{"keep", "dies", "orphan", "deleting"}
		for _, n := range names {
			p := &corev1.Pod{}
			p.Name, p.Namespace = n, "default"
			p.Spec.NodeName = nodeName
			p.Spec.TerminationGracePeriodSeconds = api.Ptr(int64(2))
			p.Spec.Containers = []corev1.Container{podServer()}
			Expect(suite.c.Create(ctx, p)).To(Succeed())
			DeferCleanup(func(ctx context.Context) {
				_ = suite.c.Delete(ctx, p, client.GracePeriodSeconds(0))
			})
		}
		pods := map[string]*corev1.Pod{}
		pids := map[string]int{}
		Eventually(func(g Gomega) {
			for _, n := range names {
				p, err := getPodE2E(ctx, n)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(cond(p, corev1.PodReady)).To(Equal(corev1.ConditionTrue), n)
				g.Expect(p.Status.PodIP).To(HavePrefix("127.11."))
				pods[n] = p
				ps := processesOn(p.Status.PodIP)
				g.Expect(ps).To(HaveLen(1))
				pids[n] = ps[0]
			}
		}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())

		By("killing the agent with SIGKILL: its containers keep running")
		agent.signal(syscall.SIGKILL)
		for _, n := range names {
			Expect(alive(pids[n])).To(BeTrue(), "%s's process died with the agent", n)
		}

		By("while the agent is down, one container dies and one pod is force-deleted")
		Expect(syscall.Kill(pids["dies"], syscall.SIGKILL)).To(Succeed())
		Expect(suite.c.Delete(ctx, pods["orphan"], client.GracePeriodSeconds(0))).To(Succeed())
		Expect(suite.c.Delete(ctx, pods["deleting"])).To(Succeed())

		By("the restarted agent adopts the running container instead of starting another")
		agent = startAgent(nodeName, root, "127.11.0.0/16")
		keepID := pods["keep"].Status.ContainerStatuses[0].ContainerID
		Consistently(func(g Gomega) {
			p, err := getPodE2E(ctx, "keep")
			g.Expect(err).NotTo(HaveOccurred())
			s := p.Status.ContainerStatuses[0]
			g.Expect(s.ContainerID).To(Equal(keepID))
			g.Expect(s.RestartCount).To(BeZero())
			g.Expect(s.Ready).To(BeTrue(), "the agent restart made the container unready")
			g.Expect(processesOn(p.Status.PodIP)).To(Equal([]int{pids["keep"]}))
		}).WithContext(ctx).WithTimeout(3 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
		Eventually(func(g Gomega) {
			p, err := getPodE2E(ctx, "keep")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cond(p, corev1.PodReady)).To(Equal(corev1.ConditionTrue))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		body, err := get(ctx, fmt.Sprintf("http://%s:8080/after-restart", pods["keep"].Status.PodIP))
		Expect(err).NotTo(HaveOccurred())
		Expect(body).To(Equal("keep"))

		By("the adopted container's output is still captured")
		Eventually(func() string {
			out, _ := kubectl(ctx, "logs", "keep").CombinedOutput()
			return string(out)
		}).WithContext(ctx).WithTimeout(20 * time.Second).WithPolling(250 * time.Millisecond).Should(ContainSubstring("served /after-restart"))

		By("the container that died meanwhile is reported with an unknown status and restarted")
		Eventually(func(g Gomega) {
			p, err := getPodE2E(ctx, "dies")
			g.Expect(err).NotTo(HaveOccurred())
			s := p.Status.ContainerStatuses[0]
			g.Expect(s.RestartCount).To(BeEquivalentTo(1))
			g.Expect(s.LastTerminationState.Terminated).NotTo(BeNil())
			g.Expect(s.LastTerminationState.Terminated.Reason).To(Equal("ContainerStatusUnknown"))
			g.Expect(s.LastTerminationState.Terminated.ExitCode).To(BeEquivalentTo(137))
			g.Expect(cond(p, corev1.PodReady)).To(Equal(corev1.ConditionTrue))
			g.Expect(processesOn(p.Status.PodIP)).To(HaveLen(1))
		}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())

		By("the force-deleted pod's container is stopped as an orphan")
		Eventually(func() bool { return alive(pids["orphan"]) }).WithContext(ctx).WithTimeout(20 * time.Second).Should(BeFalse())
		Expect(processesOn(pods["orphan"].Status.PodIP)).To(BeEmpty())

		By("the pod deleted meanwhile is terminated gracefully: SIGTERM, then the pod is gone")
		Eventually(func() error { _, err := getPodE2E(ctx, "deleting"); return err }).WithContext(ctx).WithTimeout(20 * time.Second).
			Should(MatchError(ContainSubstring("not found")))
		Expect(alive(pids["deleting"])).To(BeFalse())
		logFile := filepath.Join(root, "logs", "default_deleting_"+pods["deleting"].UID, "server", "0.log")
		Expect(os.ReadFile(logFile)).To(ContainSubstring("got SIGTERM"))

		By("killing the adopted container's process, the agent notices and restarts it")
		Expect(syscall.Kill(pids["keep"], syscall.SIGKILL)).To(Succeed())
		Eventually(func(g Gomega) {
			p, err := getPodE2E(ctx, "keep")
			g.Expect(err).NotTo(HaveOccurred())
			s := p.Status.ContainerStatuses[0]
			g.Expect(s.RestartCount).To(BeEquivalentTo(1))
			g.Expect(s.LastTerminationState.Terminated).NotTo(BeNil())
			g.Expect(s.Ready).To(BeTrue())
			g.Expect(processesOn(p.Status.PodIP)).To(HaveLen(1))
		}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())

		By("a graceful agent stop stops its containers")
		agent.signal(syscall.SIGTERM)
		Eventually(func() []int { return processesOn(pods["keep"].Status.PodIP) }).WithContext(ctx).WithTimeout(10 * time.Second).Should(BeEmpty())
	}, SpecTimeout(3*time.Minute))
})
