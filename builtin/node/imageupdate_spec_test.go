package node_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("A pod whose container image is updated", func() {
	It("restarts that container on the new image, whatever its restart policy, and leaves the others running", func(ctx SpecContext) {
		pod := &corev1.Pod{}
		pod.Name = "image-update"
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(1))
		pod.Spec.Containers = []corev1.Container{helperContainer("main", "sleep", "forever"), helperContainer("other", "sleep", "forever")}
		createAndBind(ctx, pod)
		running := func(g Gomega, p *corev1.Pod, name string) corev1.ContainerStatus {
			for _, s := range p.Status.ContainerStatuses {
				if s.Name == name {
					g.Expect(s.State.Running).NotTo(BeNil(), "%s: %+v", name, s.State)
					return s
				}
			}
			g.Expect(name).To(BeEmpty(), "no status")
			return corev1.ContainerStatus{}
		}
		var before, otherBefore corev1.ContainerStatus
		Eventually(func(g Gomega) {
			p, err := getPod(ctx, pod.Name)()
			g.Expect(err).NotTo(HaveOccurred())
			before, otherBefore = running(g, p, "main"), running(g, p, "other")
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())

		p, err := getPod(ctx, pod.Name)()
		Expect(err).NotTo(HaveOccurred())
		p.Spec.Containers[0].Image = "local/helper:2"
		Expect(suite.c.Update(ctx, p)).To(Succeed())

		Eventually(func(g Gomega) {
			p, err := getPod(ctx, pod.Name)()
			g.Expect(err).NotTo(HaveOccurred())
			s := running(g, p, "main")
			g.Expect(s.Image).To(Equal("local/helper:2"))
			g.Expect(s.RestartCount).To(Equal(int32(1)))
			g.Expect(s.ContainerID).NotTo(Equal(before.ContainerID))
			g.Expect(s.LastTerminationState.Terminated).NotTo(BeNil())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		p, err = getPod(ctx, pod.Name)()
		Expect(err).NotTo(HaveOccurred())
		other := running(Default, p, "other")
		Expect(other.ContainerID).To(Equal(otherBefore.ContainerID))
		Expect(other.RestartCount).To(BeZero())

		evs := &corev1.EventList{}
		Expect(suite.c.List(ctx, evs, client.InNamespace("default"))).To(Succeed())
		var killing []string
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == pod.Name && e.Reason == "Killing" {
				killing = append(killing, e.Message)
			}
		}
		Expect(killing).To(ContainElement("Container main definition changed, will be restarted"))
		Expect(suite.c.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	}, SpecTimeout(60*time.Second))
})
