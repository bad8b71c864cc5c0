package defaultpreemption_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	schedulingv1 "github.com/converge-dev/converge/builtin/api/scheduling/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("DefaultPreemption", func() {
	It("evicts a lower-priority pod from a full node for a higher-priority one", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "preempt-n1", "1")
		low := createPod(ctx, ns, "low", "800m", 10)
		Eventually(get(ctx, low)).Should(HaveField("Spec.NodeName", "preempt-n1"))
		bystander := createPod(ctx, ns, "bystander", "100m", 5)
		Eventually(get(ctx, bystander)).Should(HaveField("Spec.NodeName", "preempt-n1"))

		high := createPod(ctx, ns, "high", "800m", 1000)

		By("deleting the victim (only it) with a Preempted event")
		Eventually(eventsOf(ctx, low, "Preempted")).Should(ContainElement(And(
			HavePrefix("Normal Preempted by pod "+string(high.UID)), HaveSuffix(" on node preempt-n1"))))
		Eventually(func() (bool, error) {
			p, err := get(ctx, low)()
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return p.DeletionTimestamp != nil, err
		}).Should(BeTrue())
		// Where pods terminate gracefully, the victim is still there: it carries
		// the DisruptionTarget condition and the preemptor waits on its
		// nomination until the node agent is done with the victim.
		if p, err := get(ctx, low)(); err == nil {
			Expect(p.Status.Conditions).To(ContainElement(MatchFields(IgnoreExtras, Fields{
				"Type": Equal(corev1.DisruptionTarget), "Status": Equal(corev1.ConditionTrue), "Reason": Equal("PreemptionByScheduler"),
				"Message": Equal("default-scheduler: preempting to accommodate a higher priority pod"),
			})))
			Eventually(get(ctx, high)).Should(HaveField("Status.NominatedNodeName", "preempt-n1"))
			Expect(client.IgnoreNotFound(c.Delete(ctx, low, client.GracePeriodSeconds(0)))).To(Succeed())
		}

		By("binding the preemptor to the node")
		Eventually(get(ctx, high)).Should(HaveField("Spec.NodeName", "preempt-n1"))
		Expect(get(ctx, bystander)()).To(HaveField("DeletionTimestamp", BeNil()))
	})

	It("does not preempt with preemptionPolicy Never", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "preempt-n2", "1")
		low := createPod(ctx, ns, "low", "800m", 10)
		Eventually(get(ctx, low)).Should(HaveField("Spec.NodeName", "preempt-n2"))

		never := corev1.PreemptNever
		polite := createPodWith(ctx, ns, "polite", "800m", 1000, func(p *corev1.Pod) { p.Spec.PreemptionPolicy = &never })
		Eventually(eventsOf(ctx, polite, "FailedScheduling")).Should(ContainElement(
			"Warning 0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."))
		Consistently(get(ctx, low), time.Second).Should(HaveField("DeletionTimestamp", BeNil()))
	})

	It("explains why preemption cannot help", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "preempt-n3", "1")
		higher := createPod(ctx, ns, "higher", "800m", 2000)
		Eventually(get(ctx, higher)).Should(HaveField("Spec.NodeName", "preempt-n3"))

		p := createPod(ctx, ns, "p", "800m", 1000)
		Eventually(eventsOf(ctx, p, "FailedScheduling")).Should(ContainElement(
			"Warning 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."))
	})
})

func createPodWith(ctx context.Context, ns, name, cpu string, priority int32, mutate func(*corev1.Pod)) *corev1.Pod {
	p := newPod(ns, name, cpu, priority)
	mutate(p)
	// Priority comes from a PriorityClass, as the API server's priority
	// admission requires.
	policy := corev1.PreemptLowerPriority
	if p.Spec.PreemptionPolicy != nil {
		policy = *p.Spec.PreemptionPolicy
	}
	p.Spec.PriorityClassName = ensureClass(ctx, priority, policy)
	p.Spec.Priority, p.Spec.PreemptionPolicy = nil, nil
	Expect(c.Create(ctx, p)).To(Succeed())
	DeferCleanup(func(ctx context.Context) {
		Expect(client.IgnoreNotFound(c.Delete(ctx, p, client.GracePeriodSeconds(0)))).To(Succeed())
	})
	return p
}

// ensureClass creates (once) a PriorityClass with the value and policy.
func ensureClass(ctx context.Context, value int32, policy corev1.PreemptionPolicy) string {
	name := fmt.Sprintf("prio-%d-%s", value, strings.ToLower(string(policy)))
	pc := &schedulingv1.PriorityClass{ObjectMeta: api.ObjectMeta{Name: name}, Value: value, PreemptionPolicy: &policy}
	if err := c.Create(ctx, pc); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	return name
}
