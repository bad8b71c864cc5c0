package daemonset_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("DaemonSet", func() {
	It("keeps its template generation and labels pods with it: a pod of the current generation is current whatever its revision label", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, ns+"-gen", map[string]string{"gen": ns})
		ds := newDaemonSet(ns, "gen", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.NodeSelector = map[string]string{"gen": ns} })
		Expect(c.Create(ctx, ds)).To(Succeed())
		Expect(getDS(ctx, ds).Annotations).To(HaveKeyWithValue(appsv1.DeprecatedTemplateGeneration, "1"))
		Eventually(func() []corev1.Pod { return pods(ctx, ds) }).Should(HaveLen(1))
		pod := pods(ctx, ds)[0]
		Expect(pod.Labels).To(HaveKeyWithValue(appsv1.DaemonSetTemplateGenerationKey, "1"))

		By("a metadata change keeps the generation, and users cannot set it")
		// Retried: the controller writes the status meanwhile.
		updateDS := func(mutate func(*appsv1.DaemonSet)) {
			Eventually(func() error {
				cur := getDS(ctx, ds)
				mutate(cur)
				return c.Update(ctx, cur)
			}).Should(Succeed())
		}
		updateDS(func(cur *appsv1.DaemonSet) {
			cur.Labels = map[string]string{"touched": "yes"}
			cur.Annotations[appsv1.DeprecatedTemplateGeneration] = "9"
		})
		Expect(getDS(ctx, ds).Annotations).To(HaveKeyWithValue(appsv1.DeprecatedTemplateGeneration, "1"))

		By("a pod relabelled with another revision hash but of the current generation stays")
		pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] = "elsewhere"
		Expect(c.Update(ctx, &pod)).To(Succeed())
		Consistently(func() []string {
			var uids []string
			for _, p := range pods(ctx, ds) {
				uids = append(uids, string(p.UID))
			}
			return uids
		}).WithTimeout(3 * time.Second).Should(ConsistOf(string(pod.UID)))

		By("a template change is the next generation, and its pods carry it")
		updateDS(func(cur *appsv1.DaemonSet) { cur.Spec.Template.Labels["v"] = "2" })
		Expect(getDS(ctx, ds).Annotations).To(HaveKeyWithValue(appsv1.DeprecatedTemplateGeneration, "2"))
		Eventually(func() []string {
			var gens []string
			for _, p := range pods(ctx, ds) {
				if p.DeletionTimestamp == nil {
					gens = append(gens, p.Labels[appsv1.DaemonSetTemplateGenerationKey])
				}
			}
			return gens
		}).WithTimeout(20 * time.Second).Should(Equal([]string{"2"}))
	})

	It("runs one pod per eligible node by nodeSelector, affinity and taints", func(ctx SpecContext) {
		ns := namespace(ctx)
		n := func(s string) string { return ns + "-" + s }
		createNode(ctx, n("a"), map[string]string{"role": "edge", "cores": "8"})
		createNode(ctx, n("b"), map[string]string{"role": "edge", "cores": "2"})
		createNode(ctx, n("c"), map[string]string{"role": "core", "cores": "8"})
		createNode(ctx, n("d"), map[string]string{"role": "edge", "cores": "16"},
			corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule})
		// Default daemon tolerations cover the node lifecycle taints.
		createNode(ctx, n("e"), map[string]string{"role": "edge", "cores": "16"},
			corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute},
			corev1.Taint{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule})

		ds := newDaemonSet(ns, "agent", func(ds *appsv1.DaemonSet) {
			ds.Spec.Template.Spec.NodeSelector = map[string]string{"role": "edge"}
			ds.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "cores", Operator: corev1.NodeSelectorOpGt, Values: []string{"4"}}},
				}}},
			}}
		})
		Expect(c.Create(ctx, ds)).To(Succeed())
		Eventually(func() []string { return podNodes(ctx, ds) }).Should(ConsistOf(n("a"), n("e")))
		p := pods(ctx, ds)[0]
		Expect(p.Labels).To(HaveKey(appsv1.DefaultDaemonSetUniqueLabelKey))
		Expect(p.Spec.NodeName).To(BeEmpty())
		Expect(p.Spec.Tolerations).To(ContainElements(
			corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
			corev1.Toleration{Key: "node.kubernetes.io/disk-pressure", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}))

		runAndReady(ctx, ds)
		Eventually(func() appsv1.DaemonSetStatus { return getDS(ctx, ds).Status }).Should(And(
			HaveField("DesiredNumberScheduled", int32(2)), HaveField("CurrentNumberScheduled", int32(2)),
			HaveField("NumberReady", int32(2)), HaveField("NumberAvailable", int32(2)),
			HaveField("UpdatedNumberScheduled", int32(2)), HaveField("NumberMisscheduled", int32(0)),
			HaveField("ObservedGeneration", getDS(ctx, ds).Generation)))
		Eventually(func() []string { return events(ctx, ds) }).Should(ContainElement(HavePrefix("Normal/SuccessfulCreate: Created pod: agent-")))

		// A node that stops matching loses its pod; a tolerated NoSchedule
		// taint does not matter, an untolerated NoExecute one does.
		node := &corev1.Node{}
		Expect(c.Get(ctx, client.ObjectKey{Name: n("a")}, node)).To(Succeed())
		node.Labels["role"] = "core"
		Expect(c.Update(ctx, node)).To(Succeed())
		Eventually(func() []string { return podNodes(ctx, ds) }).Should(ConsistOf(n("e")))
		Expect(c.Get(ctx, client.ObjectKey{Name: n("e")}, node)).To(Succeed())
		node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: "evict", Effect: corev1.TaintEffectNoExecute})
		Expect(c.Update(ctx, node)).To(Succeed())
		Eventually(func() []corev1.Pod { return pods(ctx, ds) }).Should(BeEmpty())
		// New nodes get a pod.
		createNode(ctx, n("f"), map[string]string{"role": "edge", "cores": "32"})
		Eventually(func() []string { return podNodes(ctx, ds) }).Should(ConsistOf(n("f")))
	})

	It("rolls out a new template within maxUnavailable and records ControllerRevisions", func(ctx SpecContext) {
		ns := namespace(ctx)
		for i := range 3 {
			createNode(ctx, fmt.Sprintf("%s-n%d", ns, i), nil)
		}
		ds := newDaemonSet(ns, "roll", nil)
		Expect(c.Create(ctx, ds)).To(Succeed())
		Eventually(func() int { return len(pods(ctx, ds)) }).Should(Equal(3))
		runAndReady(ctx, ds)
		Eventually(func() int32 { return getDS(ctx, ds).Status.NumberAvailable }).Should(Equal(int32(3)))
		oldHash := pods(ctx, ds)[0].Labels[appsv1.DefaultDaemonSetUniqueLabelKey]

		cur := getDS(ctx, ds)
		Eventually(func() error {
			cur = getDS(ctx, ds)
			cur.Spec.Template.Spec.Containers[0].Image = "agent:2"
			return c.Update(ctx, cur)
		}).Should(Succeed())

		// maxUnavailable 1 (default): never more than one node without an
		// available pod; simulate the scheduler and agent until done.
		Eventually(func() int32 {
			ready := 0
			for _, p := range pods(ctx, ds) {
				if p.Status.Phase == corev1.PodRunning {
					ready++
				}
			}
			Expect(ready).To(BeNumerically(">=", 2), "at most one node may lack an available pod")
			runAndReady(ctx, ds)
			st := getDS(ctx, ds).Status
			if st.NumberAvailable != 3 || st.ObservedGeneration != cur.Generation {
				return 0
			}
			return st.UpdatedNumberScheduled
		}).Should(Equal(int32(3)))
		for _, p := range pods(ctx, ds) {
			Expect(p.Spec.Containers[0].Image).To(Equal("agent:2"))
		}
		crs := &appsv1.ControllerRevisionList{}
		Expect(c.List(ctx, crs, client.InNamespace(ns))).To(Succeed())
		Expect(crs.Items).To(HaveLen(2))
		revs := map[string]int64{}
		for _, cr := range crs.Items {
			revs[cr.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]] = cr.Revision
		}
		Expect(revs).To(HaveKeyWithValue(oldHash, int64(1)))
		Expect(revs).To(HaveLen(2))
	})

	It("surges new pods next to old ones with maxSurge and only updates deleted pods with OnDelete", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, ns+"-n0", nil)
		ds := newDaemonSet(ns, "surge", func(ds *appsv1.DaemonSet) {
			ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxSurge: api.Ptr(api.FromInt(1)), MaxUnavailable: api.Ptr(api.FromInt(0))}}
		})
		Expect(c.Create(ctx, ds)).To(Succeed())
		Eventually(func() int { return len(pods(ctx, ds)) }).Should(Equal(1))
		runAndReady(ctx, ds)
		Eventually(func() int32 { return getDS(ctx, ds).Status.NumberAvailable }).Should(Equal(int32(1)))

		cur := getDS(ctx, ds)
		Eventually(func() error {
			cur = getDS(ctx, ds)
			cur.Spec.Template.Spec.Containers[0].Image = "agent:2"
			return c.Update(ctx, cur)
		}).Should(Succeed())
		Eventually(func() int { return len(pods(ctx, ds)) }).Should(Equal(2)) // old and new side by side
		runAndReady(ctx, ds)
		Eventually(func() []string {
			var images []string
			for _, p := range pods(ctx, ds) {
				images = append(images, p.Spec.Containers[0].Image)
			}
			return images
		}).Should(ConsistOf("agent:2"))

		// OnDelete: a template change alone replaces nothing.
		Eventually(func() error {
			cur = getDS(ctx, ds)
			cur.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
			cur.Spec.Template.Spec.Containers[0].Image = "agent:3"
			return c.Update(ctx, cur)
		}).Should(Succeed())
		Eventually(func() int64 { return getDS(ctx, ds).Status.ObservedGeneration }).Should(Equal(getDS(ctx, ds).Generation))
		Consistently(func() string { return pods(ctx, ds)[0].Spec.Containers[0].Image }, "300ms").Should(Equal("agent:2"))
		p := pods(ctx, ds)[0]
		Expect(c.Delete(ctx, &p)).To(Succeed())
		Eventually(func() []string {
			var images []string
			for _, p := range pods(ctx, ds) {
				images = append(images, p.Spec.Containers[0].Image)
			}
			return images
		}).Should(ConsistOf("agent:3"))
	})

	It("replaces a failed pod, backing off when the node keeps failing it, and deletes a succeeded one", func(ctx SpecContext) {
		ns := namespace(ctx)
		node := ns + "-flaky"
		createNode(ctx, node, map[string]string{"flaky": ns})
		ds := newDaemonSet(ns, "crash", func(ds *appsv1.DaemonSet) {
			ds.Spec.Template.Spec.NodeSelector = map[string]string{"flaky": ns}
		})
		Expect(c.Create(ctx, ds)).To(Succeed())
		Eventually(func() []corev1.Pod { return pods(ctx, ds) }).Should(HaveLen(1))
		setPhase := func(p corev1.Pod, phase corev1.PodPhase) {
			p.Status.Phase = phase
			Expect(c.Status().Update(ctx, &p)).To(Succeed())
		}
		names := func() []string {
			var out []string
			for _, p := range pods(ctx, ds) {
				out = append(out, p.Name)
			}
			return out
		}
		first := pods(ctx, ds)[0]
		setPhase(first, corev1.PodFailed)
		// Deleted at once the first time, and replaced.
		Eventually(names).Should(And(HaveLen(1), Not(ContainElement(first.Name))))
		Eventually(func() []string { return events(ctx, ds) }).Should(ContainElement(
			fmt.Sprintf("Warning/FailedDaemonPod: Found failed daemon pod %s/%s on node %s, will try to kill it", ns, first.Name, node)))
		// The replacements fail too: the failed pods go after 1 s, then 2 s
		// (a replacement is created meanwhile, as in Kubernetes).
		live := func() corev1.Pod {
			var out corev1.Pod
			Eventually(func() []corev1.Pod {
				var running []corev1.Pod
				for _, p := range pods(ctx, ds) {
					if p.Status.Phase == "" || p.Status.Phase == corev1.PodPending {
						running = append(running, p)
					}
				}
				if len(running) == 1 {
					out = running[0]
				}
				return running
			}).Should(HaveLen(1))
			return out
		}
		second := live()
		setPhase(second, corev1.PodFailed)
		Eventually(names, "5s").ShouldNot(ContainElement(second.Name))
		third := live()
		setPhase(third, corev1.PodFailed)
		Consistently(names, "500ms").Should(ContainElement(third.Name))
		Eventually(names, "5s").ShouldNot(ContainElement(third.Name))
		// A pod that ran to completion is deleted and replaced.
		done := live()
		setPhase(done, corev1.PodSucceeded)
		Eventually(names).Should(And(HaveLen(1), Not(ContainElement(done.Name))))
		Eventually(func() []string { return events(ctx, ds) }).Should(ContainElement(
			fmt.Sprintf("Normal/SucceededDaemonPod: Found succeeded daemon pod %s/%s on node %s, will try to delete it", ns, done.Name, node)))
	})
})
