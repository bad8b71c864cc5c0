package podgc_test

import (
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/podgc"
	"github.com/converge-dev/converge/framework/client"
)

// disruption returns the pod's DisruptionTarget condition, if any.
func disruption(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.DisruptionTarget {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// markedByPodGC reports whether one of the versions is Failed with the
// condition the pod GC writes on orphans.
func markedByPodGC(versions []*corev1.Pod) bool {
	return slices.ContainsFunc(versions, func(p *corev1.Pod) bool {
		d := disruption(p)
		return p.Status.Phase == corev1.PodFailed && d != nil && d.Status == corev1.ConditionTrue &&
			d.Reason == podgc.ReasonDeletionByPodGC && d.Message == podgc.MessageNodeGone
	})
}

var _ = Describe("pod garbage collector", func() {
	It("marks a pod bound to a missing node Failed (DisruptionTarget, DeletionByPodGC) after the quarantine, then deletes it", func(ctx SpecContext) {
		ns := namespace(ctx)
		start := time.Now()
		p := pod(ctx, ns, "orphan", "ghost-node", corev1.PodRunning)
		versions := watchPod(ctx, p)
		Eventually(func() *corev1.Pod { return get(ctx, p) }, quarantine+5*time.Second).Should(BeNil())
		Expect(time.Since(start)).To(BeNumerically(">=", quarantine))
		Eventually(func() bool { return markedByPodGC(versions()) }).Should(BeTrue())
	}, SpecTimeout(30*time.Second))

	It("finishes the graceful deletion of a pod bound to a missing node", func(ctx SpecContext) {
		ns := namespace(ctx)
		p := pod(ctx, ns, "terminating-orphan", "ghost-node-2", corev1.PodRunning)
		Expect(c.Delete(ctx, p)).To(Succeed())
		got := get(ctx, p)
		Expect(got).NotTo(BeNil(), "the API server deletes it gracefully")
		Expect(got.DeletionTimestamp).NotTo(BeNil())
		Expect(*got.DeletionGracePeriodSeconds).To(BeNumerically(">", 0))
		Eventually(func() *corev1.Pod { return get(ctx, p) }, quarantine+5*time.Second).Should(BeNil())
	}, SpecTimeout(30*time.Second))

	It("leaves a pod on an existing node alone, and collects it once the node is deleted", func(ctx SpecContext) {
		ns := namespace(ctx)
		n := node(ctx, corev1.ConditionTrue)
		p := pod(ctx, ns, "kept", n.Name, corev1.PodRunning)
		Consistently(func(g Gomega) {
			got := get(ctx, p)
			g.Expect(got).NotTo(BeNil())
			g.Expect(got.Status.Phase).To(Equal(corev1.PodRunning))
			g.Expect(got.DeletionTimestamp).To(BeNil())
		}, quarantine+4*period).Should(Succeed())

		versions := watchPod(ctx, p)
		Expect(c.Delete(ctx, n)).To(Succeed())
		Eventually(func() *corev1.Pod { return get(ctx, p) }, quarantine+5*time.Second).Should(BeNil())
		Eventually(func() bool { return markedByPodGC(versions()) }).Should(BeTrue())
	}, SpecTimeout(30*time.Second))

	It("force-deletes a terminating pod bound to no node, marking it Failed", func(ctx SpecContext) {
		ns := namespace(ctx)
		p := &corev1.Pod{}
		p.Namespace, p.Name = ns, "unscheduled"
		p.Finalizers = []string{"example.com/hold"}
		p.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
		Expect(c.Create(ctx, p)).To(Succeed())
		Expect(c.Delete(ctx, p)).To(Succeed())
		// The finalizer keeps it; the pod GC marks it Failed and deletes it
		// with a grace of 0.
		Eventually(func(g Gomega) {
			got := get(ctx, p)
			g.Expect(got).NotTo(BeNil())
			g.Expect(got.Status.Phase).To(Equal(corev1.PodFailed))
			g.Expect(got.DeletionGracePeriodSeconds).NotTo(BeNil())
			g.Expect(*got.DeletionGracePeriodSeconds).To(BeZero())
		}).Should(Succeed())
		got := get(ctx, p)
		got.Finalizers = nil
		Expect(c.Update(ctx, got)).To(Succeed())
		Eventually(func() *corev1.Pod { return get(ctx, p) }).Should(BeNil())
	}, SpecTimeout(30*time.Second))

	It("force-deletes terminating pods of a NotReady node tainted out of service, only those", func(ctx SpecContext) {
		ns := namespace(ctx)
		oos := node(ctx, corev1.ConditionFalse, corev1.Taint{Key: podgc.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute})
		notReady := node(ctx, corev1.ConditionFalse)
		readyOOS := node(ctx, corev1.ConditionTrue, corev1.Taint{Key: podgc.TaintNodeOutOfService, Effect: corev1.TaintEffectNoSchedule})

		gone := pod(ctx, ns, "on-oos", oos.Name, corev1.PodRunning)
		running := pod(ctx, ns, "on-oos-running", oos.Name, corev1.PodRunning)
		kept1 := pod(ctx, ns, "on-not-ready", notReady.Name, corev1.PodRunning)
		kept2 := pod(ctx, ns, "on-ready-oos", readyOOS.Name, corev1.PodRunning)
		for _, p := range []*corev1.Pod{gone, kept1, kept2} {
			Expect(c.Delete(ctx, p)).To(Succeed())
			Expect(get(ctx, p).DeletionTimestamp).NotTo(BeNil())
		}
		Eventually(func() *corev1.Pod { return get(ctx, gone) }).Should(BeNil())
		Consistently(func(g Gomega) {
			for _, p := range []*corev1.Pod{running, kept1, kept2} {
				g.Expect(get(ctx, p)).NotTo(BeNil(), p.Name)
			}
			g.Expect(get(ctx, running).DeletionTimestamp).To(BeNil())
		}, 4*period).Should(Succeed())
		for _, p := range []*corev1.Pod{running, kept1, kept2} {
			Expect(c.Delete(ctx, p, client.GracePeriodSeconds(0))).To(Succeed())
		}
		for _, n := range []*corev1.Node{oos, notReady, readyOOS} {
			Expect(c.Delete(ctx, n)).To(Succeed())
		}
	}, SpecTimeout(30*time.Second))

	It("deletes the terminated pods beyond the threshold, evicted first, then oldest by creation", func(ctx SpecContext) {
		ns := namespace(ctx)
		// Created in the reverse order of their names, a second apart
		// (creationTimestamp has a one-second resolution).
		var olds []*corev1.Pod
		for i, name := range []string{"t4", "t3", "t2", "t1"} {
			if i > 0 {
				time.Sleep(1100 * time.Millisecond)
			}
			olds = append(olds, pod(ctx, ns, name, "", corev1.PodSucceeded))
		}
		// The newest pod, evicted, goes before any older one.
		evicted := pod(ctx, ns, "evicted", "", "")
		body := []byte(`{"status":{"phase":"Failed","reason":"Evicted","message":"The node was low on resource: memory."}}`)
		Expect(c.Status().Patch(ctx, evicted, client.RawPatch(client.MergePatchType, body))).To(Succeed())

		names := func() []string {
			var l corev1.PodList
			Expect(c.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
			var out []string
			for _, p := range l.Items {
				out = append(out, p.Name)
			}
			return out
		}
		Eventually(names).Should(ConsistOf("t3", "t2", "t1"))
		Consistently(names, 4*period).Should(ConsistOf("t3", "t2", "t1"))
		for _, p := range olds[1:] {
			Expect(c.Delete(ctx, p)).To(Succeed())
		}
	}, SpecTimeout(30*time.Second))
})
