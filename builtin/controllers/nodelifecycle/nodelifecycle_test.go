package nodelifecycle_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/nodelifecycle"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("node lifecycle controller", func() {
	It("marks a silent node unknown, taints it, evicts intolerant pods and recovers", func(ctx SpecContext) {
		ns := namespace(ctx)
		n := node(ctx, "zone-a")
		short := boundPod(ctx, ns, "short", n.Name, api.Ptr(int64(1)))
		patient := boundPod(ctx, ns, "patient", n.Name, nil) // default 300s tolerations

		// While the lease is renewed the node stays healthy.
		for range 3 {
			time.Sleep(grace / 2)
			renew(ctx, n.Name)
		}
		Expect(c.Get(ctx, client.ObjectKeyFromObject(n), n)).To(Succeed())
		Expect(n.Spec.Taints).To(BeEmpty())

		// The lease stops: Unknown + both unreachable taints within grace + a few seconds.
		stopped := time.Now()
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(n), n)).To(Succeed())
			var ready *corev1.NodeCondition
			for i := range n.Status.Conditions {
				c := &n.Status.Conditions[i]
				g.Expect(c.Status).To(Equal(corev1.ConditionUnknown), string(c.Type))
				if c.Type == corev1.NodeReady {
					ready = c
				}
			}
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Reason).To(Equal("NodeStatusUnknown"))
			g.Expect(ready.Message).To(Equal("Kubelet stopped posting node status."))
			g.Expect(taintKeys(n)).To(ConsistOf(
				corev1.TaintNodeUnreachable+":NoSchedule", corev1.TaintNodeUnreachable+":NoExecute"))
		}, grace+5*time.Second).Should(Succeed())
		Expect(time.Since(stopped)).To(BeNumerically(">=", grace-500*time.Millisecond))
		Eventually(func() []string { return events(ctx, "default", n.Name) }).Should(ContainElement(nodelifecycle.ReasonNodeNotReady))

		// The pod tolerating 1s is evicted; the one tolerating 300s stays.
		Eventually(func() bool {
			p := &corev1.Pod{}
			err := c.Get(ctx, client.ObjectKeyFromObject(short), p)
			return apierrors.IsNotFound(err) || (err == nil && p.DeletionTimestamp != nil)
		}, "5s").Should(BeTrue())
		Expect(events(ctx, ns, "short")).To(ContainElement(nodelifecycle.ReasonTaintManagerEviction))
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(patient), p)).To(Succeed())
			g.Expect(p.DeletionTimestamp).To(BeNil())
			g.Expect(string(readyOf(p))).To(Equal("False")) // marked not ready
		}).Should(Succeed())
		Expect(events(ctx, ns, "patient")).To(ContainElement(nodelifecycle.ReasonNodeNotReady))

		// Back: lease renewed and Ready=True posted → taints removed.
		renew(ctx, n.Name)
		postReady(ctx, n, corev1.ConditionTrue)
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(n), n)).To(Succeed())
			g.Expect(n.Spec.Taints).To(BeEmpty())
		}).Should(Succeed())
		Eventually(func() []string { return events(ctx, "default", n.Name) }).Should(ContainElement(nodelifecycle.ReasonNodeReady))
		Expect(c.Get(ctx, client.ObjectKeyFromObject(patient), patient)).To(Succeed())
		Expect(patient.DeletionTimestamp).To(BeNil())
	})

	It("taints a node reporting Ready=False as not-ready", func(ctx SpecContext) {
		n := node(ctx, "")
		postReady(ctx, n, corev1.ConditionFalse)
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(n), n)).To(Succeed())
			g.Expect(taintKeys(n)).To(ConsistOf(
				corev1.TaintNodeNotReady+":NoSchedule", corev1.TaintNodeNotReady+":NoExecute"))
		}).Should(Succeed())
		renew(ctx, n.Name)
		postReady(ctx, n, corev1.ConditionTrue)
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(n), n)).To(Succeed())
			g.Expect(n.Spec.Taints).To(BeEmpty())
		}).Should(Succeed())
	})
})

func readyOf(p *corev1.Pod) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status
		}
	}
	return ""
}
