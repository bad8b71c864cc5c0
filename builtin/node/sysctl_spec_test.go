package node_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("A pod with sysctls", func() {
	It("is rejected by the node, as the kubelet rejects it, when one is not on the safe list", func(ctx SpecContext) {
		pod := &corev1.Pod{}
		pod.Name = "unsafe-sysctl"
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{
			{Name: "kernel.shm_rmid_forced", Value: "1"}, {Name: "kernel.msgmax", Value: "10000000"}}}
		pod.Spec.Containers = []corev1.Container{helperContainer("main", "sleep", "forever")}
		createAndBind(ctx, pod)
		Eventually(func(g Gomega) {
			p, err := getPod(ctx, pod.Name)()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodFailed))
			g.Expect(p.Status.Reason).To(Equal("SysctlForbidden"))
			g.Expect(p.Status.Message).To(Equal(`Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted`))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		p, err := getPod(ctx, pod.Name)()
		Expect(err).NotTo(HaveOccurred())
		for _, s := range p.Status.ContainerStatuses {
			Expect(s.State.Running).To(BeNil(), "container %s ran", s.Name)
		}
		Expect(suite.c.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	}, SpecTimeout(60*time.Second))

	It("runs when they are safe (the process runtime shares the host's namespaces and sets none)", func(ctx SpecContext) {
		pod := &corev1.Pod{}
		pod.Name = "safe-sysctl"
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel/shm_rmid_forced", Value: "1"}}}
		pod.Spec.Containers = []corev1.Container{helperContainer("main", "sleep", "forever")}
		createAndBind(ctx, pod)
		Eventually(getPod(ctx, pod.Name)).WithContext(ctx).WithTimeout(20 * time.Second).Should(HaveField("Status.Phase", corev1.PodRunning))
		Expect(suite.c.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	}, SpecTimeout(60*time.Second))
})
