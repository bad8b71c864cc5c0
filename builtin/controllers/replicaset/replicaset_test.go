package replicaset_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("ReplicaSet controller", func() {
	It("creates the pods of a new ReplicaSet with owner, labels and events", func(ctx SpecContext) {
		ns := namespace(ctx)
		rs := newRS(ns, "web", 3)
		Expect(c.Create(ctx, rs)).To(Succeed())

		Eventually(func() []corev1.Pod { return pods(ctx, ns, "web") }).Should(HaveLen(3))
		Consistently(func() []corev1.Pod { return pods(ctx, ns, "web") }, 300*time.Millisecond).Should(HaveLen(3))
		for _, p := range pods(ctx, ns, "web") {
			Expect(p.GenerateName).To(Equal("web-"))
			Expect(p.Labels).To(Equal(map[string]string{"app": "web", "tier": "web"}))
			Expect(p.Annotations).To(HaveKeyWithValue("a", "b"))
			Expect(p.OwnerReferences).To(HaveLen(1))
			ref := p.OwnerReferences[0]
			Expect(ref.Kind).To(Equal("ReplicaSet"))
			Expect(ref.UID).To(Equal(rs.UID))
			Expect(*ref.Controller).To(BeTrue())
			Expect(*ref.BlockOwnerDeletion).To(BeTrue())
		}
		Eventually(func(g Gomega) {
			got := getRS(ctx, ns, "web")
			g.Expect(got.Status.Replicas).To(Equal(int32(3)))
			g.Expect(got.Status.FullyLabeledReplicas).To(Equal(int32(3)))
			g.Expect(got.Status.ReadyReplicas).To(Equal(int32(0)))
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		}).Should(Succeed())
		Eventually(func() []string { return eventReasons(ctx, ns, "web") }).Should(ContainElement("SuccessfulCreate"))
	})

	It("scales up and down, deleting pods in Kubernetes' order of preference", func(ctx SpecContext) {
		ns := namespace(ctx)
		Expect(c.Create(ctx, newRS(ns, "s", 4))).To(Succeed())
		Eventually(func() []corev1.Pod { return pods(ctx, ns, "s") }).Should(HaveLen(4))
		ps := pods(ctx, ns, "s")
		// ps[0]: unscheduled pending; ps[1]: scheduled pending;
		// ps[2]: ready for an hour; ps[3]: ready just now.
		setPodState(ctx, &ps[1], "node-1", corev1.PodPending, false, time.Now())
		setPodState(ctx, &ps[2], "node-1", corev1.PodRunning, true, time.Now().Add(-time.Hour))
		setPodState(ctx, &ps[3], "node-1", corev1.PodRunning, true, time.Now())
		Eventually(func() int32 { return getRS(ctx, ns, "s").Status.ReadyReplicas }).Should(Equal(int32(2)))

		names := func() []string {
			var out []string
			for _, p := range pods(ctx, ns, "s") {
				out = append(out, p.Name)
			}
			return out
		}
		scale(ctx, ns, "s", 3)
		Eventually(names).Should(ConsistOf(ps[1].Name, ps[2].Name, ps[3].Name))
		scale(ctx, ns, "s", 2)
		Eventually(names).Should(ConsistOf(ps[2].Name, ps[3].Name))
		scale(ctx, ns, "s", 1)
		Eventually(names).Should(ConsistOf(ps[2].Name)) // the newer ready pod goes first
		scale(ctx, ns, "s", 3)
		Eventually(names).Should(HaveLen(3))
		Consistently(names, 300*time.Millisecond).Should(HaveLen(3))
		Eventually(func() []string { return eventReasons(ctx, ns, "s") }).Should(ContainElement("SuccessfulDelete"))
	})

	It("adopts a matching orphan and releases a pod whose labels stop matching", func(ctx SpecContext) {
		ns := namespace(ctx)
		orphan := &corev1.Pod{
			ObjectMeta: api.ObjectMeta{Name: "orphan", Namespace: ns, Labels: map[string]string{"app": "a"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		Expect(c.Create(ctx, orphan)).To(Succeed())
		rs := newRS(ns, "a", 2)
		Expect(c.Create(ctx, rs)).To(Succeed())

		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orphan"}, p)).To(Succeed())
			g.Expect(p.OwnerReferences).To(HaveLen(1))
			g.Expect(p.OwnerReferences[0].UID).To(Equal(rs.UID))
		}).Should(Succeed())
		Eventually(func() []corev1.Pod { return pods(ctx, ns, "a") }).Should(HaveLen(2))
		Consistently(func() []corev1.Pod { return pods(ctx, ns, "a") }, 300*time.Millisecond).Should(HaveLen(2))

		// Relabel the adopted pod: the ReplicaSet releases it and replaces it.
		p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: "orphan", Namespace: ns}}
		Expect(c.Patch(ctx, p, client.RawPatch(client.MergePatchType, []byte(`{"metadata":{"labels":{"app":"other"}}}`)))).To(Succeed())
		Eventually(func(g Gomega) {
			got := &corev1.Pod{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orphan"}, got)).To(Succeed())
			g.Expect(got.OwnerReferences).To(BeEmpty())
		}).Should(Succeed())
		Eventually(func() []corev1.Pod { return pods(ctx, ns, "a") }).Should(HaveLen(2))
	})

	It("counts ready and available pods with minReadySeconds", func(ctx SpecContext) {
		ns := namespace(ctx)
		rs := newRS(ns, "m", 2)
		rs.Spec.MinReadySeconds = 2
		Expect(c.Create(ctx, rs)).To(Succeed())
		Eventually(func() []corev1.Pod { return pods(ctx, ns, "m") }).Should(HaveLen(2))
		for _, p := range pods(ctx, ns, "m") {
			markReady(ctx, &p)
		}
		Eventually(func(g Gomega) {
			st := getRS(ctx, ns, "m").Status
			g.Expect(st.ReadyReplicas).To(Equal(int32(2)))
			g.Expect(st.AvailableReplicas).To(Equal(int32(0)))
		}).Should(Succeed())
		Eventually(func() int32 { return getRS(ctx, ns, "m").Status.AvailableReplicas }, 5*time.Second).Should(Equal(int32(2)))

		// A new generation is observed.
		scale(ctx, ns, "m", 1)
		Eventually(func(g Gomega) {
			got := getRS(ctx, ns, "m")
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
			g.Expect(got.Status.Replicas).To(Equal(int32(1)))
		}).Should(Succeed())
	})

	It("ignores finished pods when counting", func(ctx SpecContext) {
		ns := namespace(ctx)
		Expect(c.Create(ctx, newRS(ns, "f", 1))).To(Succeed())
		Eventually(func() []corev1.Pod { return pods(ctx, ns, "f") }).Should(HaveLen(1))
		p := pods(ctx, ns, "f")[0]
		setPodState(ctx, &p, "node-1", corev1.PodFailed, false, time.Now())
		Eventually(func() []corev1.Pod { return pods(ctx, ns, "f") }).Should(HaveLen(2))
		Eventually(func() int32 { return getRS(ctx, ns, "f").Status.Replicas }).Should(Equal(int32(1)))
	})
})
