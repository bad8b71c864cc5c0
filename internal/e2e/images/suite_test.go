package images

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/node/podnet"
	"github.com/converge-dev/converge/internal/e2etool"
	"github.com/converge-dev/converge/internal/registrytest"
)

func TestImages(t *testing.T) {
	RegisterFailHandler(Fail)
	EnforceDefaultTimeoutsWhenUsingContexts()
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	suiteConfig, reporterConfig := GinkgoConfiguration()
	if suiteConfig.Timeout > 6*time.Minute {
		suiteConfig.Timeout = 6 * time.Minute
	}
	RunSpecs(t, "real images on converge up --runtime containerd", suiteConfig, reporterConfig)
}

// The pod and Service ranges of this suite's control plane: its own, so that
// a converge up on this machine with the defaults does not collide with it.
const (
	podCIDR     = "10.42.240.0/24"
	serviceCIDR = "10.43.240.0/24"
	user, pass  = "deploy", "s3cret-pull"
)

// suite is what every spec shares.
var suite struct {
	dir        string // converge up's data dir
	bin        string // the converge binary
	kubectl    string
	kubeconfig string
	home       string
	public     *registrytest.Registry // plain HTTP, anonymous
	private    *registrytest.Registry // htpasswd basic auth
	failed     bool                   // a spec failed: the logs are printed at the end
}

var _ = BeforeSuite(func(ctx SpecContext) {
	for _, tool := range []string{"containerd", "runc", "/usr/lib/cni/bridge", "/bin/busybox", "docker-registry"} {
		_, err := exec.LookPath(tool)
		Expect(err).NotTo(HaveOccurred(), "%s is missing: run hack/ci-deps.sh (apt-get install containerd runc containernetworking-plugins busybox-static docker-registry)", tool)
	}
	suite.kubectl = kubectlBinary()

	root, err := e2etool.RepoRoot(ctx)
	Expect(err).NotTo(HaveOccurred())
	build := GinkgoT().TempDir()
	suite.bin = goBuild(ctx, root, filepath.Join(build, "converge"), "./cmd/converge")
	web1 := goBuild(ctx, root, filepath.Join(build, "web1"), "./internal/e2e/images/testdata/web", "-ldflags=-X main.version=v1")
	web2 := goBuild(ctx, root, filepath.Join(build, "web2"), "./internal/e2e/images/testdata/web", "-ldflags=-X main.version=v2")

	suite.public = registrytest.Start(GinkgoT(), registrytest.Options{})
	suite.private = registrytest.Start(GinkgoT(), registrytest.Options{Username: user, Password: pass})

	// A short data dir: containerd's socket path must fit in a sockaddr.
	suite.dir, err = os.MkdirTemp("", "cvimg-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = os.RemoveAll(suite.dir) })
	suite.home = GinkgoT().TempDir()
	startUp(suite.dir)

	// Images built by `converge image build` into the node's containerd and
	// pushed by `converge image push`, as a user would publish them.
	sock := filepath.Join(suite.dir, "node", "containerd", "containerd.sock")
	for _, img := range []struct{ bin, name string }{
		{web1, "local/web:v1"}, {web2, "local/web:v2"}, {"/bin/busybox", "local/busybox:v1"},
	} {
		converge("image", "build", "--binary", img.bin, "--name", img.name, "--import", "--address", sock)
	}
	converge("image", "push", "local/web:v1", suite.public.Host+"/web:v1", "--address", sock)
	converge("image", "push", "local/web:v2", suite.public.Host+"/web:v2", "--address", sock)
	converge("image", "push", "local/busybox:v1", suite.public.Host+"/busybox:v1", "--address", sock)
	converge("image", "push", "local/busybox:v1", suite.private.Host+"/team/busybox:v1", "--address", sock,
		"--username", user, "--password", pass)
	// The node must pull what it runs: nothing is left in containerd but the sources' blobs.
	for _, name := range []string{"local/web:v1", "local/web:v2", "local/busybox:v1"} {
		converge("image", "rm", name, "--address", sock)
	}
	if ls := converge("image", "ls", "--address", sock); strings.Contains(ls, suite.public.Host) || strings.Contains(ls, suite.private.Host) {
		// push may leave the destination name behind; the node must pull.
		for _, name := range []string{suite.public.Host + "/web:v1", suite.public.Host + "/web:v2", suite.public.Host + "/busybox:v1", suite.private.Host + "/team/busybox:v1"} {
			if strings.Contains(ls, name) {
				converge("image", "rm", name, "--address", sock)
			}
		}
	}
}, NodeTimeout(4*time.Minute))

// startUp runs `converge up --runtime containerd` in dir on a free port until
// the suite ends, and waits for its ready line.
func startUp(dir string) {
	port := freePort()
	cmd := exec.Command(suite.bin, "up", "--runtime", "containerd", "--data-dir", dir, "--port", strconv.Itoa(port),
		"--pod-cidr", podCIDR, "--service-cidr", serviceCIDR)
	cmd.Env = append(os.Environ(), "HOME="+suite.home)
	logFile, err := os.Create(filepath.Join(dir, "up.log"))
	Expect(err).NotTo(HaveOccurred())
	out, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	cmd.Stderr = logFile
	Expect(cmd.Start()).To(Succeed())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	DeferCleanup(func() {
		// Pods first, so the node tears their networks down (a stopped node
		// keeps them for its restart, and this data dir goes away).
		if out, err := kubectl("delete", "deployments,pods", "--all", "--wait", "--timeout=60s"); err != nil {
			GinkgoWriter.Printf("deleting the suite's workloads: %v\n%s\n", err, out)
		}
		Eventually(func() ([]string, error) {
			return filepath.Glob(filepath.Join(dir, "node", "netns", "*"))
		}).WithTimeout(30*time.Second).Should(BeEmpty(), "pod network namespaces left after their pods were deleted")
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(45 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logFile.Close()
		reapLeftovers(dir)
		// The node keeps its masquerade rule and bridge when it stops; this
		// suite's node goes for good. Its name is the host's.
		if host, err := os.Hostname(); err == nil {
			if err := podnet.RemoveMasquerade(host); err != nil {
				GinkgoWriter.Printf("removing the node's masquerade rule: %v\n", err)
			}
			if err := podnet.RemoveBridge(host); err != nil {
				GinkgoWriter.Printf("removing the node's bridge: %v\n", err)
			}
		}
		if suite.failed {
			for _, f := range []string{logFile.Name(), filepath.Join(dir, "node", "containerd", "containerd.log")} {
				if b, err := os.ReadFile(f); err == nil {
					GinkgoWriter.Printf("--- %s (tail) ---\n%s\n", f, tail(string(b), 150))
				}
			}
		}
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logFile, line)
			if k, found := strings.CutPrefix(strings.TrimSpace(line), "export KUBECONFIG="); found {
				suite.kubeconfig = k
			}
			if !ok && strings.Contains(line, "is ready at") {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		Expect(ok).To(BeTrue(), "converge up exited before it was ready; see %s", logFile.Name())
	case <-time.After(2 * time.Minute):
		Fail("converge up --runtime containerd was not ready after 2 minutes")
	}
	Expect(suite.kubeconfig).NotTo(BeEmpty(), "converge up printed no export KUBECONFIG line")
}

// kubectl runs the real kubectl against the suite's control plane and
// returns its combined output.
func kubectl(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, suite.kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+suite.kubeconfig, "HOME="+suite.home)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustKubectl is kubectl that fails the spec on error.
func mustKubectl(args ...string) string {
	GinkgoHelper()
	out, err := kubectl(args...)
	Expect(err).NotTo(HaveOccurred(), "kubectl %s:\n%s", strings.Join(args, " "), out)
	return out
}

// kubectlApply applies a YAML manifest from stdin.
func kubectlApply(manifest string) {
	GinkgoHelper()
	cmd := exec.Command(suite.kubectl, "apply", "-f", "-")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+suite.kubeconfig, "HOME="+suite.home)
	cmd.Stdin = strings.NewReader(manifest)
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "kubectl apply:\n%s\n%s", manifest, out)
}

// converge runs the converge CLI and fails the spec on error.
func converge(args ...string) string {
	GinkgoHelper()
	cmd := exec.Command(suite.bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+suite.home, "KUBECONFIG="+suite.kubeconfig)
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "converge %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// kubectlBinary is the real kubectl 1.33 beside the dispatcher /usr/bin/kubectl
// (WIRE.md §1), else kubectl on PATH.
func kubectlBinary() string {
	GinkgoHelper()
	if p, err := e2etool.Kubectl("1.33"); err == nil {
		return p
	}
	p, err := exec.LookPath("kubectl")
	Expect(err).NotTo(HaveOccurred(), "this suite needs the real kubectl")
	return p
}

func goBuild(ctx context.Context, root, out, pkg string, flags ...string) string {
	GinkgoHelper()
	Expect(e2etool.GoBuild(ctx, root, out, pkg, []string{"CGO_ENABLED=0"}, flags...)).To(Succeed())
	return out
}

func freePort() int {
	GinkgoHelper()
	port, err := e2etool.FreePort()
	Expect(err).NotTo(HaveOccurred())
	return port
}

// httpGet fetches url with a short timeout and returns the body.
func httpGet(url string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), errors.New(resp.Status)
	}
	return string(b), err
}

func tail(s string, lines int) string {
	l := strings.Split(s, "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}
