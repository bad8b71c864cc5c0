package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestNodeE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	suiteConfig, reporterConfig := GinkgoConfiguration()
	if suiteConfig.Timeout > 5*time.Minute {
		suiteConfig.Timeout = 5 * time.Minute
	}
	RunSpecs(t, "Node agent end-to-end suite", suiteConfig, reporterConfig)
}

// kubectlPath is the real kubectl (WIRE.md §1: a dispatcher to versioned binaries).
const kubectlPath = "/usr/bin/kubectl"

// suite is the state the specs share, set in BeforeSuite.
var suite struct {
	env    *testenv.Environment
	c      *client.Client
	server string // the podserver binary
	home   string // kubectl's HOME
}

var _ = BeforeSuite(func(ctx SpecContext) {
	_, err := os.Stat(kubectlPath)
	Expect(err).NotTo(HaveOccurred(), "this suite needs the real kubectl at %s", kubectlPath)
	suite.server = buildPodServer()
	env, err := testenv.Start(ctx, testenv.Options{LocalNode: true, Controllers: []string{"*"}, Scheduler: true, Logger: GinkgoLogr.V(1)})
	Expect(err).NotTo(HaveOccurred())
	suite.env = env
	DeferCleanup(func() { Expect(env.Stop()).To(Succeed()) })
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	suite.c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())
	suite.home = GinkgoT().TempDir()
}, NodeTimeout(3*time.Minute))

// buildPodServer builds testdata/podserver into a temporary directory.
func buildPodServer() string {
	GinkgoHelper()
	dir, err := os.MkdirTemp("", "converge-node-e2e-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = os.RemoveAll(dir) })
	bin := filepath.Join(dir, "podserver")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/podserver")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build podserver: %s", out)
	return bin
}

// dumpState prints the events and pods of the default namespace when a spec failed.
var _ = JustAfterEach(func(ctx SpecContext) {
	if !CurrentSpecReport().Failed() {
		return
	}
	evs := &corev1.EventList{}
	if err := suite.c.List(ctx, evs, client.InNamespace("default")); err == nil {
		for _, e := range evs.Items {
			GinkgoWriter.Printf("event %s %s: %s %s\n", e.InvolvedObject.Name, e.Type, e.Reason, e.Message)
		}
	}
	pods := &corev1.PodList{}
	if err := suite.c.List(ctx, pods, client.InNamespace("default")); err == nil {
		for _, p := range pods.Items {
			GinkgoWriter.Printf("pod %s on %q: %s %+v\n", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.ContainerStatuses)
		}
	}
})

// kubectl prepares a kubectl command against the environment.
func kubectl(ctx context.Context, args ...string) *exec.Cmd {
	return kubectlWith(ctx, suite.env.Kubeconfig, args...)
}

// kubectlWith prepares a kubectl command with a kubeconfig.
func kubectlWith(ctx context.Context, kubeconfig string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, kubectlPath, append([]string{"--cache-dir=" + filepath.Join(suite.home, "cache")}, args...)...)
	cmd.Env = []string{"HOME=" + suite.home, "KUBECONFIG=" + kubeconfig, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir()}
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// processOf finds the host PID of the podserver serving on ip (its argv holds
// --listen=IP:PORT).
func processOf(ip string) (int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
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
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no podserver process listens on %s", ip)
}

func cond(p *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}
