package scheduler_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	schedulingv1 "github.com/converge-dev/converge/builtin/api/scheduling/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("Scheduler", func() {
	It("places a pod on the only node with enough cpu (NodeResourcesFit)", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "fit-small", "2", "8Gi")
		createNode(ctx, "fit-big", "4", "8Gi")
		p := createPod(ctx, ns, "p", requests("3", "1Gi"))
		Eventually(nodeNameOf(ctx, p)).Should(Equal("fit-big"))
		Eventually(eventsOf(ctx, p, "Scheduled")).Should(ContainElement("Normal Successfully assigned " + ns + "/p to fit-big"))
	})

	It("spreads pods to the least allocated node (LeastAllocated score)", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "la-a", "4", "8Gi")
		createNode(ctx, "la-b", "4", "8Gi")
		first := createPod(ctx, ns, "first", requests("2", "2Gi"))
		Eventually(nodeNameOf(ctx, first)).ShouldNot(BeEmpty())
		firstNode := nodeNameOf(ctx, first)()
		second := createPod(ctx, ns, "second", requests("1", "1Gi"))
		Eventually(nodeNameOf(ctx, second)).ShouldNot(BeEmpty())
		Expect(nodeNameOf(ctx, second)()).NotTo(Equal(firstNode))
	})

	It("honours nodeSelector and required node affinity incl. matchFields (NodeAffinity)", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "na-a", "4", "8Gi", withLabels("topology.kubernetes.io/zone", "a"))
		createNode(ctx, "na-b", "4", "8Gi", withLabels("topology.kubernetes.io/zone", "b"))
		createNode(ctx, "na-c", "4", "8Gi", withLabels("topology.kubernetes.io/zone", "c"))
		bySelector := createPod(ctx, ns, "selector", func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{"topology.kubernetes.io/zone": "b"}
		})
		byField := createPod(ctx, ns, "field", func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"na-c"}}}}},
			}}}
		})
		preferred := createPod(ctx, ns, "preferred", func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
				Weight: 50, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}},
			}}}}
		})
		Eventually(nodeNameOf(ctx, bySelector)).Should(Equal("na-b"))
		Eventually(nodeNameOf(ctx, byField)).Should(Equal("na-c"))
		Eventually(nodeNameOf(ctx, preferred)).Should(Equal("na-a"))
	})

	It("avoids tainted and cordoned nodes unless tolerated (TaintToleration, NodeUnschedulable)", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "tt-gpu", "4", "8Gi", withTaint("dedicated", "gpu", corev1.TaintEffectNoSchedule))
		createNode(ctx, "tt-cordoned", "4", "8Gi", unschedulable)
		createNode(ctx, "tt-plain", "1", "1Gi")
		plain := createPod(ctx, ns, "plain")
		Eventually(nodeNameOf(ctx, plain)).Should(Equal("tt-plain"))
		gpu := createPod(ctx, ns, "gpu", requests("2", ""), func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		})
		Eventually(nodeNameOf(ctx, gpu)).Should(Equal("tt-gpu"))
	})

	It("prefers nodes without PreferNoSchedule taints and with the pod's image (scores)", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "sc-soft", "4", "8Gi", withTaint("spot", "true", corev1.TaintEffectPreferNoSchedule), withImage("registry.example/big:1", 800<<20))
		createNode(ctx, "sc-image", "4", "8Gi", withImage("registry.example/big:1", 800<<20))
		createNode(ctx, "sc-none", "4", "8Gi")
		p := createPod(ctx, ns, "p", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "registry.example/big:1" })
		Eventually(nodeNameOf(ctx, p)).Should(Equal("sc-image"))
	})

	It("keeps host ports apart (NodePorts)", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "np-a", "4", "8Gi")
		createNode(ctx, "np-b", "4", "8Gi")
		port := func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
		}
		a := createPod(ctx, ns, "a", port)
		Eventually(nodeNameOf(ctx, a)).ShouldNot(BeEmpty())
		b := createPod(ctx, ns, "b", port)
		Eventually(nodeNameOf(ctx, b)).ShouldNot(BeEmpty())
		Expect(nodeNameOf(ctx, b)()).NotTo(Equal(nodeNameOf(ctx, a)()))
		third := createPod(ctx, ns, "c", port)
		Eventually(scheduledCondition(ctx, third)).Should(And(Not(BeNil()), HaveField("Message", "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.")))
	})

	It("reports FailedScheduling with Kubernetes' summary and schedules once a fitting node appears", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "fs-small-1", "1", "8Gi")
		createNode(ctx, "fs-small-2", "1", "8Gi")
		for _, n := range []string{"fs-gpu-1", "fs-gpu-2", "fs-gpu-3"} {
			createNode(ctx, n, "8", "8Gi", withTaint("dedicated", "gpu", corev1.TaintEffectNoSchedule))
		}
		p := createPod(ctx, ns, "big", requests("2", "1Gi"))
		const msg = "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/5 nodes are available: "
		Eventually(scheduledCondition(ctx, p)).Should(And(
			Not(BeNil()),
			HaveField("Status", corev1.ConditionFalse),
			HaveField("Reason", "Unschedulable"),
			HaveField("Message", HavePrefix(msg)),
		))
		Eventually(eventsOf(ctx, p, "FailedScheduling")).Should(ContainElement(HavePrefix("Warning " + msg)))
		// Parked: the 5 minute flush must not be needed.
		Eventually(func() int { _, _, u := sched.Queue().Lens(); return u }).Should(BeNumerically(">=", 1))
		start := time.Now()
		createNode(ctx, "fs-fits", "4", "8Gi")
		Eventually(nodeNameOf(ctx, p), 5*time.Second).Should(Equal("fs-fits"))
		Expect(time.Since(start)).To(BeNumerically("<", 5*time.Second))
	})

	It("holds gated pods out of the queue until their gates are removed (SchedulingGates)", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "sg-a", "4", "8Gi")
		p := createPod(ctx, ns, "gated", func(p *corev1.Pod) {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
		})
		Consistently(nodeNameOf(ctx, p), time.Second).Should(BeEmpty())
		var got corev1.Pod
		Expect(c.Get(ctx, client.ObjectKeyFromObject(p), &got)).To(Succeed())
		got.Spec.SchedulingGates = nil
		Expect(c.Update(ctx, &got)).To(Succeed())
		Eventually(nodeNameOf(ctx, p)).Should(Equal("sg-a"))
	})

	It("ignores pods for other schedulers", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "os-a", "4", "8Gi")
		p := createPod(ctx, ns, "other", func(p *corev1.Pod) { p.Spec.SchedulerName = "other-scheduler" })
		Consistently(nodeNameOf(ctx, p), time.Second).Should(BeEmpty())
		Expect(scheduledCondition(ctx, p)()).To(BeNil())
	})

	It("schedules higher priority pods first", func(ctx SpecContext) {
		ns := namespace(ctx)
		// Room for one pod; create both before the node exists.
		for name, v := range map[string]int32{"sched-low": 1, "sched-high": 100} {
			pc := &schedulingv1.PriorityClass{ObjectMeta: api.ObjectMeta{Name: name}, Value: v}
			if err := c.Create(ctx, pc); err != nil && !apierrors.IsAlreadyExists(err) {
				Expect(err).NotTo(HaveOccurred())
			}
		}
		low := createPod(ctx, ns, "low", requests("3", ""), func(p *corev1.Pod) { p.Spec.PriorityClassName = "sched-low" })
		high := createPod(ctx, ns, "high", requests("3", ""), func(p *corev1.Pod) { p.Spec.PriorityClassName = "sched-high" })
		Eventually(scheduledCondition(ctx, low)).ShouldNot(BeNil())
		Eventually(scheduledCondition(ctx, high)).ShouldNot(BeNil())
		createNode(ctx, "pr-a", "4", "8Gi")
		// Either the queue served the high one first, or, if the low one won the
		// race out of backoff, the high one preempts it (DefaultPreemption is in
		// the default profile): it is nominated to the node and the low one is
		// deleted gracefully. Without a node agent the victim stays terminating,
		// so the high one is not bound then, as in Kubernetes.
		outcome := func() string {
			var h, l corev1.Pod
			if err := c.Get(ctx, client.ObjectKeyFromObject(high), &h); err != nil {
				return err.Error()
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(low), &l); err != nil && !apierrors.IsNotFound(err) {
				return err.Error()
			}
			switch {
			case h.Spec.NodeName == "pr-a" && l.Spec.NodeName != "pr-a":
				return "high bound"
			case h.Status.NominatedNodeName == "pr-a" && l.Spec.NodeName == "pr-a" && l.DeletionTimestamp != nil:
				return "low preempted"
			}
			return "high on " + h.Spec.NodeName + " (nominated " + h.Status.NominatedNodeName + "), low on " + l.Spec.NodeName
		}
		Eventually(outcome).Should(BeElementOf("high bound", "low preempted"))
		Consistently(outcome, 500*time.Millisecond).Should(BeElementOf("high bound", "low preempted"))
	})

	It("counts attempts, preemption attempts and pending pods in its metrics", func(ctx SpecContext) {
		ns := namespace(ctx)
		scheduled := map[string]string{"result": "scheduled", "profile": "default-scheduler"}
		unschedulable := map[string]string{"result": "unschedulable", "profile": "default-scheduler"}
		before := max(metricValue("scheduler_schedule_attempts_total", scheduled), 0)
		beforeFailed := max(metricValue("scheduler_schedule_attempts_total", unschedulable), 0)
		beforePreemption := max(metricValue("scheduler_preemption_attempts_total", nil), 0)
		createNode(ctx, "me-a", "2", "8Gi")
		p := createPod(ctx, ns, "fits", requests("1", "1Gi"))
		Eventually(nodeNameOf(ctx, p)).Should(Equal("me-a"))
		Eventually(func() float64 { return metricValue("scheduler_schedule_attempts_total", scheduled) }).Should(BeNumerically(">=", before+1))
		Expect(metricValue("scheduler_scheduling_attempt_duration_seconds", scheduled)).To(BeNumerically(">=", before+1))

		big := createPod(ctx, ns, "too-big", requests("8", "1Gi"))
		Eventually(scheduledCondition(ctx, big)).ShouldNot(BeNil())
		Expect(metricValue("scheduler_schedule_attempts_total", unschedulable)).To(BeNumerically(">=", beforeFailed+1))
		Expect(metricValue("scheduler_preemption_attempts_total", nil)).To(BeNumerically(">=", beforePreemption+1))
		Eventually(func() float64 {
			return metricValue("scheduler_pending_pods", map[string]string{"queue": "unschedulable"})
		}).Should(BeNumerically(">=", 1))
		for _, q := range []string{"active", "backoff", "gated"} {
			Expect(metricValue("scheduler_pending_pods", map[string]string{"queue": q})).To(BeNumerically(">=", 0))
		}
	})
})
