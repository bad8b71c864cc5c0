package pullspec_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/containerd"
	"github.com/converge-dev/converge/builtin/node/cri/containerd/daemon"
	"github.com/converge-dev/converge/builtin/node/image"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/internal/registrytest"
	"github.com/converge-dev/converge/testenv"
)

func TestPullSpecs(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Image pull suite")
}

const (
	nodeName = "node-pull"
	testPkg  = "github.com/converge-dev/converge/builtin/node/cri/containerd/testdata/testbin"
	user     = "alice"
	password = "s3cret"
)

var suite struct {
	env        *testenv.Environment
	c          *client.Client
	rt         *containerd.Runtime
	open, auth *registrytest.Registry
	// testbin (a static Go program) on the open registry; busybox on the
	// protected one.
	testbin, busybox string
}

var _ = BeforeSuite(func(ctx SpecContext) {
	suite.open = registrytest.Start(GinkgoT(), registrytest.Options{})
	suite.auth = registrytest.Start(GinkgoT(), registrytest.Options{Username: user, Password: password})

	dir, err := os.MkdirTemp("", "cvg-pull-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	// The daemon outlives the specs' cleanups (it gets its own context).
	dctx, stopDaemon := context.WithCancel(context.Background())
	d, err := daemon.Start(dctx, daemon.Options{Dir: dir})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { stopDaemon(); _ = d.Wait() })
	suite.rt, err = containerd.New(ctx, containerd.Options{Address: d.Address()})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		Expect(suite.rt.RemoveAll(ctx)).To(Succeed())
		Expect(suite.rt.Close()).To(Succeed())
	})

	// Build, push and forget the images: only pulls bring them back.
	bin := filepath.Join(GinkgoT().TempDir(), "testbin")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, testPkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build: %s", out)
	suite.testbin = suite.open.Host + "/demo/testbin:v1"
	suite.busybox = suite.auth.Host + "/private/busybox:v1"
	Expect(os.Stat("/bin/busybox")).Error().NotTo(HaveOccurred(), "static busybox is required: apt-get install -y busybox-static")
	pushImage(ctx, bin, "/bin/testbin", suite.testbin, nil)
	pushImage(ctx, "/bin/busybox", "/bin/busybox", suite.busybox, []cri.Credential{{Host: suite.auth.Host, Username: user, Password: password}})

	suite.env, err = testenv.Start(context.Background(), testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(suite.env.Stop()).To(Succeed()) })
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	suite.c, err = client.New(&client.Config{Host: suite.env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())
	agent, err := node.New(node.Options{
		NodeName: nodeName, Config: &client.Config{Host: suite.env.URL}, Runtime: suite.rt,
		RootDir: filepath.Join(dir, "node"), PodCIDR: "127.78.0.0/16", PodNetwork: node.PodNetworkLoopback, // pulls, not networking
		ImagePullBackOffBase: 400 * time.Millisecond, ImagePullBackOffMax: 2 * time.Second,
		// Every pass removes every image no pod uses.
		ImageGCHighThresholdPercent: api.Ptr(0), ImageGCLowThresholdPercent: api.Ptr(0), ImageGCInterval: 300 * time.Millisecond,
		Logger: GinkgoLogr,
	})
	Expect(err).NotTo(HaveOccurred())
	actx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- agent.Start(actx) }()
	DeferCleanup(func() {
		stop()
		Eventually(done, 30*time.Second).Should(Receive(BeNil()))
	})
})

// pushImage packs binary into an image, imports it, pushes it as ref and
// removes it locally.
func pushImage(ctx context.Context, binary, path, ref string, creds []cri.Credential) {
	GinkgoHelper()
	var buf bytes.Buffer
	_, err := image.Build(ctx, image.BuildOptions{Binary: binary, Name: "converge-pull-src:" + filepath.Base(binary), Path: path, Out: &buf})
	Expect(err).NotTo(HaveOccurred())
	names, err := image.Import(ctx, suite.rt.Client(), &buf)
	Expect(err).NotTo(HaveOccurred())
	_, err = suite.rt.Push(ctx, names[0], ref, creds)
	Expect(err).NotTo(HaveOccurred())
	for _, n := range []string{names[0], ref} {
		Expect(suite.rt.RemoveImage(ctx, n)).To(Succeed())
	}
}

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
})

// createAndBind creates pod in "default" and binds it to the agent's node.
func createAndBind(ctx context.Context, pod *corev1.Pod) {
	GinkgoHelper()
	pod.Namespace = "default"
	Expect(suite.c.Create(ctx, pod)).To(Succeed())
	b := &corev1.Binding{Target: corev1.ObjectReference{Kind: "Node", Name: nodeName}}
	b.Name, b.Namespace = pod.Name, pod.Namespace
	Expect(suite.c.SubResource("binding").Create(ctx, pod, b)).To(Succeed())
}

// deletePod deletes a pod at once and waits until it is gone.
func deletePod(ctx context.Context, name string) {
	GinkgoHelper()
	p := &corev1.Pod{}
	p.Namespace, p.Name = "default", name
	Expect(client.IgnoreNotFound(suite.c.Delete(ctx, p, client.GracePeriodSeconds(0)))).To(Succeed())
	Eventually(func() error {
		return suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &corev1.Pod{})
	}, 30*time.Second, 100*time.Millisecond).Should(MatchError(ContainSubstring("not found")))
}

// waiting returns the first container's waiting reason and message.
func waiting(ctx context.Context, name string) func() string {
	return func() string {
		p := &corev1.Pod{}
		if err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, p); err != nil || len(p.Status.ContainerStatuses) == 0 {
			return ""
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		if w == nil {
			if p.Status.ContainerStatuses[0].State.Running != nil {
				return "Running"
			}
			return ""
		}
		return w.Reason + ": " + w.Message
	}
}

// events returns "Type Reason: Message" of the pod's events.
func events(ctx context.Context, pod string) func() []string {
	return func() []string {
		evs := &corev1.EventList{}
		if err := suite.c.List(ctx, evs, client.InNamespace("default")); err != nil {
			return nil
		}
		var out []string
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == pod {
				out = append(out, e.Type+" "+e.Reason+": "+e.Message)
			}
		}
		return out
	}
}

// hasImage reports whether the runtime holds ref.
func hasImage(ctx context.Context, ref string) func() bool {
	return func() bool {
		_, ok, err := suite.rt.ImageStatus(ctx, ref)
		return err == nil && ok
	}
}

func pod(name, img string, policy corev1.PullPolicy, args ...string) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyAlways,
		Containers:    []corev1.Container{{Name: "main", Image: img, ImagePullPolicy: policy, Command: args}},
	}}
	p.Name = name
	return p
}
