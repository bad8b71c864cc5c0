package node_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("A pod of the pause image", func() {
	It("runs on the process runtime and goes at once when deleted", func(ctx SpecContext) {
		pod := &corev1.Pod{}
		pod.Name = "pause"
		pod.Spec.Containers = []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}
		createAndBind(ctx, pod)
		Eventually(func(g Gomega) {
			p, err := getPod(ctx, "pause")()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			g.Expect(p.Status.ContainerStatuses).To(HaveLen(1))
			g.Expect(p.Status.ContainerStatuses[0].Ready).To(BeTrue())
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		Consistently(func() (corev1.PodPhase, error) {
			p, err := getPod(ctx, "pause")()
			if err != nil {
				return "", err
			}
			return p.Status.Phase, nil
		}).WithContext(ctx).WithTimeout(time.Second).Should(Equal(corev1.PodRunning))

		t0 := time.Now()
		Expect(suite.c.Delete(ctx, pod, client.GracePeriodSeconds(30))).To(Succeed())
		Eventually(func() bool {
			_, err := getPod(ctx, "pause")()
			return apierrors.IsNotFound(err)
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(BeTrue())
		Expect(time.Since(t0)).To(BeNumerically("<", 10*time.Second), "SIGTERM ends the pause process; the 30 s grace period is not waited out")
	}, SpecTimeout(60*time.Second))
})
