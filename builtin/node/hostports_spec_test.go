package node_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

var _ = Describe("Host ports on the node", func() {
	It("rejects a pod whose host port an admitted pod holds, and admits one once that pod is gone", func(ctx SpecContext) {
		withPort := func(name string) corev1.Container {
			c := shContainer(name, "trap 'exit 0' TERM; sleep 60 & wait")
			c.Ports = []corev1.ContainerPort{{Name: "conflict", ContainerPort: 21017, HostPort: 21017}}
			return c
		}
		startPod(ctx, "hostport-a", corev1.RestartPolicyAlways, nil, withPort("main"))
		Eventually(getPod(ctx, "hostport-a")).WithContext(ctx).WithTimeout(20 * time.Second).Should(HaveField("Status.Phase", corev1.PodRunning))

		By("a second pod of the same host port fails before it runs, as the kubelet's admission")
		startPod(ctx, "hostport-b", corev1.RestartPolicyAlways, nil, withPort("main"))
		Eventually(getPod(ctx, "hostport-b")).WithContext(ctx).WithTimeout(20 * time.Second).Should(And(
			HaveField("Status.Phase", corev1.PodFailed), HaveField("Status.Reason", "NodePorts"),
			HaveField("Status.Message", "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports")))

		By("once the first pod is gone, a new pod of that port runs")
		a, err := getPod(ctx, "hostport-a")()
		Expect(err).NotTo(HaveOccurred())
		Expect(suite.c.Delete(ctx, a)).To(Succeed())
		Eventually(func() bool {
			_, err := getPod(ctx, "hostport-a")()
			return apierrors.IsNotFound(err)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(BeTrue())
		startPod(ctx, "hostport-c", corev1.RestartPolicyAlways, nil, withPort("main"))
		Eventually(getPod(ctx, "hostport-c")).WithContext(ctx).WithTimeout(20 * time.Second).Should(HaveField("Status.Phase", corev1.PodRunning))
	}, SpecTimeout(90*time.Second))

	It("frees a finished pod's host port while the pod object stays, as the kubelet stops a terminal pod's sandbox", func(ctx SpecContext) {
		c := shContainer("main", "exit 0")
		c.Ports = []corev1.ContainerPort{{Name: "done", ContainerPort: 21018, HostPort: 21018}}
		startPod(ctx, "hostport-done", corev1.RestartPolicyNever, nil, c)
		Eventually(getPod(ctx, "hostport-done")).WithContext(ctx).WithTimeout(20 * time.Second).Should(And(
			HaveField("Status.Phase", corev1.PodSucceeded), HaveField("Status.PodIP", Not(BeEmpty()))))

		By("a new pod of that port runs beside the finished one")
		next := shContainer("main", "trap 'exit 0' TERM; sleep 60 & wait")
		next.Ports = c.Ports
		startPod(ctx, "hostport-next", corev1.RestartPolicyAlways, nil, next)
		Eventually(getPod(ctx, "hostport-next")).WithContext(ctx).WithTimeout(20 * time.Second).Should(HaveField("Status.Phase", corev1.PodRunning))
		done, err := getPod(ctx, "hostport-done")()
		Expect(err).NotTo(HaveOccurred())
		Expect(done.Status.Phase).To(Equal(corev1.PodSucceeded), "the finished pod keeps its status")
		Expect(done.Status.PodIP).NotTo(BeEmpty(), "and its pod IP")
	}, SpecTimeout(90*time.Second))
})
