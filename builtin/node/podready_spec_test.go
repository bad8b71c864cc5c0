package node_test

import (
	"reflect"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api/fields"
	"github.com/converge-dev/converge/framework/client"
)

// condition returns the status of the pod's condition t ("" when absent).
func condition(p *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

var _ = Describe("Pod readiness without probes", func() {
	// "Pods should run through the lifecycle of Pods and PodStatus" waits for
	// phase Running, then expects Ready and ContainersReady True: like the
	// kubelet, a container with no readiness (or startup) probe is Ready in
	// the very status that first shows it running.
	It("is reported together with the Running phase, in one status write", func(ctx SpecContext) {
		const name = "ready-with-running"
		w, err := suite.c.Watch(ctx, &corev1.PodList{}, client.InNamespace("default"),
			&client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name)})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		pod := &corev1.Pod{}
		pod.Name = name
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(1))
		pod.Spec.Containers = []corev1.Container{helperContainer("main", "sleep", "forever")}
		createAndBind(ctx, pod)
		var running *corev1.Pod
		var before []corev1.PodStatus // the statuses the agent wrote before Running
		for running == nil {
			select {
			case ev, ok := <-w.ResultChan():
				Expect(ok).To(BeTrue(), "the watch ended")
				p, isPod := ev.Object.(*corev1.Pod)
				switch {
				case !isPod:
				case p.Status.Phase == corev1.PodRunning:
					running = p
				case p.Status.StartTime != nil && (len(before) == 0 || !reflect.DeepEqual(before[len(before)-1], p.Status)): // the agent's
					before = append(before, p.Status)
				}
			case <-ctx.Done():
				Fail("the pod never ran")
			}
		}
		// As the kubelet's: Pending once, then Running with the pod IP and
		// PodReadyToStartContainers; the network's readiness is not a write
		// of its own (a burst of starts pays for every status patch).
		Expect(before).To(HaveLen(1), "%+v", before)
		Expect(running.Status.PodIP).NotTo(BeEmpty())
		Expect(condition(running, corev1.PodReadyToStartContainers)).To(Equal(corev1.ConditionTrue), "%+v", running.Status.Conditions)
		Expect(condition(running, corev1.ContainersReady)).To(Equal(corev1.ConditionTrue), "%+v", running.Status.Conditions)
		Expect(condition(running, corev1.PodReady)).To(Equal(corev1.ConditionTrue), "%+v", running.Status.Conditions)
		Expect(running.Status.ContainerStatuses).To(ConsistOf(HaveField("Ready", true)))
		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
	}, SpecTimeout(30*time.Second))

	// The agent writes the pod status as a merge patch whose conditions list
	// replaces the stored one: conditions it does not own (DisruptionTarget
	// from an eviction, a readiness gate's) must survive its writes, as with
	// the kubelet: a Job's pod failure policy reads DisruptionTarget from the
	// terminal status the agent writes after the eviction's delete.
	It("keeps conditions set by others through its status writes, up to the terminal one", func(ctx SpecContext) {
		const name = "evicted"
		const gate = corev1.PodConditionType("example.com/gate")
		pod := &corev1.Pod{}
		pod.Name = name
		pod.Finalizers = []string{"example.com/keep"} // the Job controller's tracking finalizer, say
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(1))
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		pod.Spec.Containers = []corev1.Container{helperContainer("main", "sleep", "forever")}
		createAndBind(ctx, pod)
		Eventually(func(g Gomega) {
			p, err := getPod(ctx, name)()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
		}).WithContext(ctx).Should(Succeed())

		p, err := getPod(ctx, name)()
		Expect(err).NotTo(HaveOccurred())
		p.Status.Conditions = append(p.Status.Conditions,
			corev1.PodCondition{Type: gate, Status: corev1.ConditionTrue},
			corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"})
		Expect(suite.c.Status().Update(ctx, p)).To(Succeed())
		Expect(suite.c.Delete(ctx, p)).To(Succeed())
		Eventually(func(g Gomega) {
			p, err := getPod(ctx, name)()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.Status.Phase).To(Or(Equal(corev1.PodFailed), Equal(corev1.PodSucceeded)), "the agent's terminal status")
			g.Expect(condition(p, corev1.DisruptionTarget)).To(Equal(corev1.ConditionTrue))
			g.Expect(condition(p, gate)).To(Equal(corev1.ConditionTrue))
			g.Expect(condition(p, corev1.PodReady)).To(Equal(corev1.ConditionFalse))
		}).WithContext(ctx).Should(Succeed())
		p, err = getPod(ctx, name)()
		Expect(err).NotTo(HaveOccurred())
		p.Finalizers = nil
		Expect(suite.c.Update(ctx, p)).To(Succeed())
	}, SpecTimeout(60*time.Second))
})
