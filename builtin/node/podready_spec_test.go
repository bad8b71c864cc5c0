package node_test

import (
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
		for running == nil {
			select {
			case ev, ok := <-w.ResultChan():
				Expect(ok).To(BeTrue(), "the watch ended")
				if p, isPod := ev.Object.(*corev1.Pod); isPod && p.Status.Phase == corev1.PodRunning {
					running = p
				}
			case <-ctx.Done():
				Fail("the pod never ran")
			}
		}
		Expect(condition(running, corev1.ContainersReady)).To(Equal(corev1.ConditionTrue), "%+v", running.Status.Conditions)
		Expect(condition(running, corev1.PodReady)).To(Equal(corev1.ConditionTrue), "%+v", running.Status.Conditions)
		Expect(running.Status.ContainerStatuses).To(ConsistOf(HaveField("Ready", true)))
		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
	}, SpecTimeout(30*time.Second))
})
