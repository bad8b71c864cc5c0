package node_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

var _ = Describe("activeDeadlineSeconds on the process runtime", func() {
	It("stops a pod whose deadline was lowered while it runs: Failed, DeadlineExceeded, not restarted", func(ctx SpecContext) {
		pod := &corev1.Pod{}
		pod.Name = "deadline"
		pod.Spec.ActiveDeadlineSeconds = ptr(int64(3600))
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(1))
		pod.Spec.Containers = []corev1.Container{helperContainer("main", "out", "ready", "sleep", "forever")}
		createAndBind(ctx, pod)
		Eventually(func() (string, error) { return podLogs(ctx, "deadline", "main", "") }).WithContext(ctx).Should(ContainSubstring("ready"))

		// The agent writes the pod's status meanwhile: a conflict is read again.
		var p *corev1.Pod
		Eventually(func() (err error) {
			if p, err = getPod(ctx, "deadline")(); err != nil {
				return err
			}
			p.Spec.ActiveDeadlineSeconds = ptr(int64(1))
			return suite.c.Update(ctx, p)
		}).WithContext(ctx).Should(Succeed())

		Eventually(getPod(ctx, "deadline")).WithContext(ctx).WithTimeout(20 * time.Second).Should(And(
			HaveField("Status.Phase", corev1.PodFailed),
			HaveField("Status.Reason", "DeadlineExceeded"),
			HaveField("Status.Message", "Pod was active on the node longer than the specified deadline")))
		Consistently(getPod(ctx, "deadline")).WithContext(ctx).WithTimeout(2 * time.Second).Should(
			HaveField("Status.ContainerStatuses", ContainElement(HaveField("RestartCount", BeZero()))))
		Expect(suite.c.Delete(ctx, p)).To(Succeed())
	}, SpecTimeout(60*time.Second))
})
