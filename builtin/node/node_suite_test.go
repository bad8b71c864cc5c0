package node_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/cri/process"
	"github.com/converge-dev/converge/builtin/node/cri/runtimetest"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestNode(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Node agent suite")
}

// suite is the suite's shared state, set in BeforeSuite.
var suite struct {
	env    *testenv.Environment
	c      *client.Client
	agent  *node.Agent
	rt     *process.Runtime
	helper string
	root   string
	cancel context.CancelFunc
	done   chan error
}

const nodeName = "node-e2e"

var _ = BeforeSuite(func() {
	suite.helper = runtimetest.BuildHelper(GinkgoT())
	env, err := testenv.Start(context.Background(), testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	suite.env = env
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	suite.c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())
	suite.root = filepath.Join(env.Dir, "node")
	suite.rt = process.New(process.Options{})
	suite.agent, err = node.New(node.Options{
		NodeName: nodeName, Config: &client.Config{Host: env.URL}, Runtime: suite.rt, RootDir: suite.root,
		PodCIDR: "127.77.0.0/16", Zone: "zone-a",
		CrashLoopBackOffBase: 400 * time.Millisecond, CrashLoopBackOffMax: 5 * time.Second,
		NodeStatusUpdateInterval: time.Second, VolumeResyncInterval: 300 * time.Millisecond,
		Logger: GinkgoLogr,
	})
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	suite.cancel, suite.done = cancel, make(chan error, 1)
	go func() { suite.done <- suite.agent.Start(ctx) }()
})

// dumpEvents prints the events of the namespace when a spec failed.
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
			GinkgoWriter.Printf("pod %s: %s %+v\n", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
		}
	}
})

var _ = AfterSuite(func() {
	if suite.cancel != nil {
		suite.cancel()
		Eventually(suite.done, 30*time.Second).Should(Receive(BeNil()))
	}
	if suite.env != nil {
		Expect(suite.env.Stop()).To(Succeed())
	}
	if suite.helper != "" {
		_ = os.RemoveAll(filepath.Dir(suite.helper))
	}
})

// createAndBind creates pod in "default" and binds it to the agent's node.
func createAndBind(ctx context.Context, pod *corev1.Pod) *corev1.Pod {
	GinkgoHelper()
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	Expect(suite.c.Create(ctx, pod)).To(Succeed())
	b := &corev1.Binding{Target: corev1.ObjectReference{Kind: "Node", Name: nodeName}}
	b.Name, b.Namespace = pod.Name, pod.Namespace
	Expect(suite.c.SubResource("binding").Create(ctx, pod, b)).To(Succeed())
	return pod
}

func getPod(ctx context.Context, name string) func() (*corev1.Pod, error) {
	return func() (*corev1.Pod, error) {
		p := &corev1.Pod{}
		err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, p)
		return p, err
	}
}

// helperContainer runs the conformance helper with a script.
func helperContainer(name string, script ...string) corev1.Container {
	return corev1.Container{Name: name, Image: "local/helper:1", Command: append([]string{suite.helper}, script...)}
}

func ptr[T any](v T) *T { return api.Ptr(v) }
