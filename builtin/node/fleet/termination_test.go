package fleet_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/fleet"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

var _ = Describe("Deleting pods on simulated nodes", func() {
	getPod := func(ctx context.Context, name string) func() (*corev1.Pod, error) {
		return func() (*corev1.Pod, error) {
			p := &corev1.Pod{}
			return p, suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, p)
		}
	}
	running := func(ctx context.Context, name string) {
		GinkgoHelper()
		Eventually(getPod(ctx, name)).WithContext(ctx).WithTimeout(10 * time.Second).
			Should(HaveField("Status.Phase", corev1.PodRunning))
	}

	It("completes a graceful deletion at once by default", func(ctx SpecContext) {
		pod := &corev1.Pod{}
		pod.Name = "sim-deleted"
		pod.Spec.Containers = []corev1.Container{{Name: "web", Image: "nginx"}}
		bind(ctx, pod, "sim-node-5")
		running(ctx, "sim-deleted")
		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
		Eventually(func() error { _, err := getPod(ctx, "sim-deleted")(); return err }).WithContext(ctx).
			WithTimeout(5 * time.Second).Should(Satisfy(apierrors.IsNotFound))
	}, SpecTimeout(30*time.Second))

	It("keeps a deleted pod Terminating for PodTerminationDelay", func(ctx SpecContext) {
		fleet, err := fleet.New(fleet.Options{
			Config: &client.Config{Host: suite.env.URL}, Nodes: 1, NamePrefix: "slow-node-",
			PodTerminationDelay: 1500 * time.Millisecond, Logger: GinkgoLogr,
		})
		Expect(err).NotTo(HaveOccurred())
		fctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- fleet.Start(fctx) }()
		defer func() { cancel(); Eventually(done).WithTimeout(10 * time.Second).Should(Receive(BeNil())) }()
		Eventually(fleet.Registered).WithContext(ctx).WithTimeout(10 * time.Second).Should(Equal(1))

		pod := &corev1.Pod{}
		pod.Name = "slow-deleted"
		pod.Spec.Containers = []corev1.Container{{Name: "web", Image: "nginx"}}
		bind(ctx, pod, "slow-node-0")
		running(ctx, "slow-deleted")
		start := time.Now()
		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
		p, err := getPod(ctx, "slow-deleted")()
		Expect(err).NotTo(HaveOccurred(), "the pod stays while it terminates")
		Expect(p.DeletionTimestamp).NotTo(BeNil())
		Eventually(func() error { _, err := getPod(ctx, "slow-deleted")(); return err }).WithContext(ctx).
			WithTimeout(10 * time.Second).Should(Satisfy(apierrors.IsNotFound))
		Expect(time.Since(start)).To(BeNumerically(">=", time.Second), "deleted after the termination delay")
	}, SpecTimeout(40*time.Second))
})

var _ = Describe("Namespace deletion with pods on simulated nodes", func() {
	It("deletes a namespace whose ReplicaSet pods run, once the nodes finished their graceful deletion", func(ctx SpecContext) {
		env, err := testenv.Start(ctx, testenv.Options{
			Controllers: []string{"namespace", "garbagecollector", "replicaset"}, Scheduler: true, SimulatedNodes: 2,
		})
		Expect(err).NotTo(HaveOccurred())
		defer func() { Expect(env.Stop()).To(Succeed()) }()
		sch, err := all.NewScheme()
		Expect(err).NotTo(HaveOccurred())
		c, err := client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
		Expect(err).NotTo(HaveOccurred())

		ns := &corev1.Namespace{}
		ns.Name = "doomed"
		Expect(c.Create(ctx, ns)).To(Succeed())
		rs := &appsv1.ReplicaSet{}
		rs.Namespace, rs.Name = "doomed", "web"
		rs.Spec.Replicas = api.Ptr(int32(3))
		rs.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
		rs.Spec.Template.Labels = map[string]string{"app": "web"}
		rs.Spec.Template.Spec.Containers = []corev1.Container{{Name: "web", Image: "nginx"}}
		Expect(c.Create(ctx, rs)).To(Succeed())
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(c.List(ctx, pods, client.InNamespace("doomed"))).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(3))
			for _, p := range pods.Items {
				g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			}
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())

		Expect(c.Delete(ctx, ns)).To(Succeed())
		Eventually(func() error { return c.Get(ctx, client.ObjectKey{Name: "doomed"}, &corev1.Namespace{}) }).WithContext(ctx).
			WithTimeout(30 * time.Second).Should(Satisfy(apierrors.IsNotFound))
	}, SpecTimeout(60*time.Second))
})
