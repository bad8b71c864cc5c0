package podnet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/cri/containerd"
	"github.com/converge-dev/converge/builtin/node/cri/containerd/daemon"
	"github.com/converge-dev/converge/builtin/node/image"
	"github.com/converge-dev/converge/builtin/node/nodeip"
	"github.com/converge-dev/converge/builtin/node/podnet"
	"github.com/converge-dev/converge/builtin/node/proxy"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestPodNetwork(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "pod network (CNI on containerd)")
}

// agent is a node agent of the suite.
type agent struct {
	name, root, cidr string
	cancel           context.CancelFunc
	done             chan error
}

// suite is the shared state, set in BeforeSuite.
var suite struct {
	env        *testenv.Environment
	c          *client.Client
	rt         *containerd.Runtime
	stopDaemon context.CancelFunc
	daemon     *daemon.Daemon
	dir        string // containerd's dir and the nodes' root dirs
	a, b, bad  *agent // two working nodes and one whose CNI bin dir is empty
	proxyIface string
	nodeIP     string // the host's address, which the agents advertise
	stopProxy  context.CancelFunc
	proxyDone  chan error
}

const img = "cnet-busybox"

var _ = BeforeSuite(func(ctx SpecContext) {
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	for _, p := range podnet.Plugins {
		_, err := os.Stat(filepath.Join("/usr/lib/cni", p))
		Expect(err).NotTo(HaveOccurred(), "the CNI plugins are required: apt-get install containernetworking-plugins")
	}
	Expect("/bin/busybox").To(BeARegularFile(), "a static busybox is required: apt-get install busybox-static")

	r := rand.IntN(250)
	env, err := testenv.Start(context.WithoutCancel(ctx), testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	suite.env = env
	alloc, err := servicenet.New(env.ControlPlane.Storage(), servicenet.Options{ServiceCIDR: fmt.Sprintf("10.43.%d.0/24", r)})
	Expect(err).NotTo(HaveOccurred())
	reg := env.ControlPlane.Registry()
	res := *reg.Get(corev1.GroupVersion().WithResource("services"))
	servicenet.WrapServiceResource(&res, alloc)
	reg.Add(&res)
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	suite.c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())

	suite.dir, err = os.MkdirTemp("", "cvg-cnet-")
	Expect(err).NotTo(HaveOccurred())
	dctx, stop := context.WithCancel(context.Background())
	suite.stopDaemon = stop
	suite.daemon, err = daemon.Start(dctx, daemon.Options{Dir: filepath.Join(suite.dir, "ctd")})
	Expect(err).NotTo(HaveOccurred(), "containerd is required")
	suite.rt, err = containerd.New(ctx, containerd.Options{Address: suite.daemon.Address()})
	Expect(err).NotTo(HaveOccurred())
	importBusybox(ctx)

	ip, err := nodeip.Detect()
	Expect(err).NotTo(HaveOccurred(), "the machine needs a non-loopback IPv4 address")
	suite.nodeIP = ip.String()
	suite.a = startAgent(fmt.Sprintf("cnet-a-%d", r), fmt.Sprintf("10.88.%d.0/24", r), nil)
	suite.b = startAgent(fmt.Sprintf("cnet-b-%d", r), fmt.Sprintf("10.89.%d.0/24", r), nil)
	suite.bad = startAgent(fmt.Sprintf("cnet-bad-%d", r), fmt.Sprintf("10.90.%d.0/24", r), []string{GinkgoT().TempDir()})

	suite.proxyIface = fmt.Sprintf("cvt%d", r)
	p, err := proxy.New(proxy.Options{Client: suite.c, NodePortAddresses: []string{"127.0.0.1", suite.nodeIP}, Interface: suite.proxyIface,
		DialTimeout: time.Second, Logger: GinkgoLogr.WithName("proxy")})
	Expect(err).NotTo(HaveOccurred())
	pctx, cancel := context.WithCancel(context.Background())
	suite.stopProxy, suite.proxyDone = cancel, make(chan error, 1)
	go func() { suite.proxyDone <- p.Start(pctx) }()
})

var _ = AfterSuite(func() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if suite.c != nil {
		pods := &corev1.PodList{}
		if err := suite.c.List(ctx, pods, client.InNamespace("default")); err == nil {
			for i := range pods.Items {
				_ = suite.c.Delete(ctx, &pods.Items[i], client.GracePeriodSeconds(0))
			}
		}
		Eventually(func() ([]corev1.Pod, error) {
			err := suite.c.List(ctx, pods, client.InNamespace("default"))
			return pods.Items, err
		}, 30*time.Second).Should(BeEmpty())
	}
	for _, a := range []*agent{suite.a, suite.b, suite.bad} {
		if a != nil {
			Eventually(func() ([]os.DirEntry, error) {
				es, err := os.ReadDir(filepath.Join(a.root, "netns"))
				if os.IsNotExist(err) {
					return nil, nil
				}
				return es, err
			}, 30*time.Second).Should(BeEmpty(), "pod networks of %s torn down", a.name)
			a.cancel()
			Eventually(a.done, 30*time.Second).Should(Receive(BeNil()))
			if out, err := runIP("link", "del", podnet.BridgeName(a.name)); err != nil && !strings.Contains(out, "Cannot find") {
				GinkgoWriter.Printf("remove bridge of %s: %v %s\n", a.name, err, out)
			}
			Expect(podnet.RemoveMasquerade(a.name)).To(Succeed())
		}
	}
	if suite.stopProxy != nil {
		suite.stopProxy()
		Eventually(suite.proxyDone).Should(Receive(BeNil()))
		Expect(linkExists(suite.proxyIface)).To(BeFalse(), "the proxy removes its interface")
	}
	if suite.rt != nil {
		Expect(suite.rt.RemoveAll(ctx)).To(Succeed())
		Expect(suite.rt.Close()).To(Succeed())
	}
	if suite.stopDaemon != nil {
		suite.stopDaemon()
		_ = suite.daemon.Wait()
	}
	if suite.env != nil {
		Expect(suite.env.Stop()).To(Succeed())
	}
	if suite.dir != "" {
		Expect(os.RemoveAll(suite.dir)).To(Succeed())
	}
})

// dumpState prints the namespace's events and pods when a spec failed.
var _ = JustAfterEach(func(ctx SpecContext) {
	if !CurrentSpecReport().Failed() {
		return
	}
	for _, l := range []client.ObjectList{&corev1.EventList{}, &corev1.PodList{}} {
		if err := suite.c.List(ctx, l, client.InNamespace("default")); err == nil {
			b, _ := json.MarshalIndent(l, "", " ")
			GinkgoWriter.Printf("%s\n", b)
		}
	}
})

func importBusybox(ctx context.Context) {
	GinkgoHelper()
	archive := filepath.Join(GinkgoT().TempDir(), "busybox.tar")
	f, err := os.Create(archive)
	Expect(err).NotTo(HaveOccurred())
	_, err = image.Build(ctx, image.BuildOptions{Binary: "/bin/busybox", Name: img, Out: f})
	Expect(err).NotTo(HaveOccurred())
	Expect(f.Close()).To(Succeed())
	f, err = os.Open(archive)
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	_, err = image.Import(ctx, suite.rt.Client(), f)
	Expect(err).NotTo(HaveOccurred())
}

func startAgent(name, cidr string, binDirs []string) *agent {
	GinkgoHelper()
	a := &agent{name: name, root: filepath.Join(suite.dir, name), cidr: cidr, done: make(chan error, 1)}
	ag, err := node.New(node.Options{NodeName: name, Config: &client.Config{Host: suite.env.URL}, Runtime: suite.rt,
		RootDir: a.root, PodCIDR: cidr, CNIBinDirs: binDirs, NodeStatusUpdateInterval: time.Second,
		Logger: GinkgoLogr.WithName(name)})
	Expect(err).NotTo(HaveOccurred())
	var ctx context.Context
	ctx, a.cancel = context.WithCancel(context.Background())
	go func() { a.done <- ag.Start(ctx) }()
	return a
}

// sh runs a busybox shell script as a container (the imported image: never pulled).
func sh(name, script string) corev1.Container {
	return corev1.Container{Name: name, Image: img, ImagePullPolicy: corev1.PullNever, Command: []string{"/bin/busybox", "sh", "-c", script}}
}

// webScript serves "hello from <hostname>" on port 8080.
const webScript = `B=/bin/busybox; $B mkdir -p /www && echo "hello from $($B hostname)" > /www/index.html && exec $B httpd -f -p 8080 -h /www`

func createOn(ctx context.Context, a *agent, pod *corev1.Pod) {
	GinkgoHelper()
	pod.Namespace = "default"
	pod.Spec.NodeName = a.name
	Expect(suite.c.Create(ctx, pod)).To(Succeed())
}

func getPod(ctx context.Context, name string) func() (*corev1.Pod, error) {
	return func() (*corev1.Pod, error) {
		p := &corev1.Pod{}
		err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, p)
		return p, err
	}
}

// running waits until every container of the pod runs and returns it.
func running(ctx context.Context, name string) *corev1.Pod {
	GinkgoHelper()
	var pod *corev1.Pod
	Eventually(func(g Gomega) {
		p, err := getPod(ctx, name)()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(p.Status.ContainerStatuses).NotTo(BeEmpty())
		for _, s := range p.Status.ContainerStatuses {
			g.Expect(s.State.Running).NotTo(BeNil(), "container %s", s.Name)
		}
		pod = p
	}).Should(Succeed())
	return pod
}

// execIn runs a command in a container of the pod and returns its output.
func execIn(ctx context.Context, pod *corev1.Pod, container string, cmd ...string) (string, error) {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container {
			code, out, err := suite.rt.Exec(ctx, strings.TrimPrefix(s.ContainerID, "containerd://"), cmd)
			if err == nil && code != 0 {
				err = fmt.Errorf("exit code %d", code)
			}
			return string(out), err
		}
	}
	return "", fmt.Errorf("no container %s", container)
}

// wget fetches url from inside a container.
func wget(ctx context.Context, pod *corev1.Pod, container, url string) func() (string, error) {
	return func() (string, error) {
		return execIn(ctx, pod, container, "/bin/busybox", "timeout", "3", "/bin/busybox", "wget", "-q", "-O", "-", url) // wget -T crashes busybox 1.36
	}
}

// httpGet fetches url from the host.
func httpGet(url string) func() (string, error) {
	return func() (string, error) {
		c := http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get(url)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
}

func inCIDR(cidr string) func(string) bool {
	_, n, _ := net.ParseCIDR(cidr)
	return func(ip string) bool { return n.Contains(net.ParseIP(ip)) }
}

func hostPort() int32 { return int32(40000 + rand.IntN(9000)) }
