package fleet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	coordinationv1 "github.com/converge-dev/converge/builtin/api/coordination/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/fleet"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestSimulated(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Simulated fleet suite")
}

var suite struct {
	env    *testenv.Environment
	c      *client.Client
	fleet  *fleet.Fleet
	cancel context.CancelFunc
	done   chan error
}

var _ = BeforeSuite(func() {
	env, err := testenv.Start(context.Background(), testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	suite.env = env
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	suite.c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())
	suite.fleet, err = fleet.New(fleet.Options{
		Config: &client.Config{Host: env.URL}, Nodes: 50, Zones: []string{"a", "b"},
		LeaseRenewInterval: time.Second, PodStartDelay: 200 * time.Millisecond, JobCompletionDelay: time.Second,
		ServeStats: true, Logger: GinkgoLogr,
	})
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	suite.cancel, suite.done = cancel, make(chan error, 1)
	go func() { suite.done <- suite.fleet.Start(ctx) }()
})

var _ = AfterSuite(func() {
	if suite.cancel != nil {
		suite.cancel()
		Eventually(suite.done, 30*time.Second).Should(Receive(BeNil()))
	}
	if suite.env != nil {
		Expect(suite.env.Stop()).To(Succeed())
	}
})

func bind(ctx context.Context, pod *corev1.Pod, node string) {
	GinkgoHelper()
	pod.Namespace = "default"
	Expect(suite.c.Create(ctx, pod)).To(Succeed())
	b := &corev1.Binding{Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	b.Name, b.Namespace = pod.Name, pod.Namespace
	Expect(suite.c.SubResource("binding").Create(ctx, pod, b)).To(Succeed())
}

var _ = Describe("A simulated fleet", func() {
	It("registers Ready nodes with zones and renews their leases", func(ctx SpecContext) {
		Eventually(func(g Gomega) {
			nodes := &corev1.NodeList{}
			g.Expect(suite.c.List(ctx, nodes)).To(Succeed())
			ready := 0
			for _, n := range nodes.Items {
				if !strings.HasPrefix(n.Name, "sim-node-") {
					continue // another spec's fleet
				}
				for _, c := range n.Status.Conditions {
					if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
			g.Expect(ready).To(Equal(50))
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		n := &corev1.Node{}
		Expect(suite.c.Get(ctx, client.ObjectKey{Name: "sim-node-1"}, n)).To(Succeed())
		Expect(n.Labels).To(HaveKeyWithValue("topology.kubernetes.io/zone", "b"))
		Expect(n.Status.Allocatable).To(HaveKey("cpu"))
		lease := &coordinationv1.Lease{}
		Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "kube-node-lease", Name: "sim-node-7"}, lease)).To(Succeed())
		first := lease.Spec.RenewTime.Time
		Eventually(func() time.Time {
			_ = suite.c.Get(ctx, client.ObjectKey{Namespace: "kube-node-lease", Name: "sim-node-7"}, lease)
			return lease.Spec.RenewTime.Time
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(BeTemporally(">", first))
	}, SpecTimeout(60*time.Second))

	It("runs bound pods to Running and Ready, and Job pods to Succeeded", func(ctx SpecContext) {
		pod := &corev1.Pod{}
		pod.Name = "sim-web"
		pod.Spec.Containers = []corev1.Container{{Name: "web", Image: "nginx"}}
		bind(ctx, pod, "sim-node-3")
		job := &corev1.Pod{}
		job.Name = "sim-job"
		job.OwnerReferences = []api.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "00000000-0000-0000-0000-000000000001", Controller: api.Ptr(true)}}
		job.Spec.RestartPolicy = corev1.RestartPolicyNever
		job.Spec.Containers = []corev1.Container{{Name: "work", Image: "busybox"}}
		bind(ctx, job, "sim-node-4")
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "sim-web"}, p)).To(Succeed())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			g.Expect(p.Status.PodIP).To(HavePrefix("10.0.3."))
			g.Expect(p.Status.ContainerStatuses).To(ConsistOf(HaveField("Ready", true)))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "sim-job"}, p)).To(Succeed())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded))
			g.Expect(p.Status.ContainerStatuses[0].State.Terminated).NotTo(BeNil())
			g.Expect(p.Status.ContainerStatuses[0].State.Terminated.Reason).To(Equal("Completed"))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	}, SpecTimeout(60*time.Second))
})
