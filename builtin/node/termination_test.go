package node_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/fields"
	"github.com/converge-dev/converge/framework/client"
)

// lastStateBeforeDeletion watches pod name and returns the last state written
// before it was deleted and when the DELETED event came.
func watchUntilDeleted(ctx context.Context, name string) (func() (*corev1.Pod, time.Time), client.Watcher) {
	GinkgoHelper()
	w, err := suite.c.Watch(ctx, &corev1.PodList{}, client.InNamespace("default"),
		&client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name)})
	Expect(err).NotTo(HaveOccurred())
	wait := func() (*corev1.Pod, time.Time) {
		GinkgoHelper()
		var last *corev1.Pod
		for {
			select {
			case ev, ok := <-w.ResultChan():
				Expect(ok).To(BeTrue(), "the watch ended before the pod was deleted")
				p, isPod := ev.Object.(*corev1.Pod)
				if !isPod {
					continue
				}
				if ev.Type == client.Deleted {
					return last, time.Now()
				}
				last = p
			case <-ctx.Done():
				Fail("the pod was not deleted in time")
			}
		}
	}
	return wait, w
}

var _ = Describe("Graceful termination on the process runtime", func() {
	It("sends SIGTERM, then SIGKILL after the grace period, writes a Failed final status and deletes the pod", func(ctx SpecContext) {
		wait, w := watchUntilDeleted(ctx, "stubborn")
		defer w.Stop()
		pod := &corev1.Pod{}
		pod.Name = "stubborn"
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(2))
		pod.Spec.Containers = []corev1.Container{helperContainer("main", "ignore-term", "out", "ready", "sleep", "forever")}
		createAndBind(ctx, pod)
		Eventually(func() (string, error) { return podLogs(ctx, "stubborn", "main", "") }).WithContext(ctx).Should(ContainSubstring("ready"))

		start := time.Now()
		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
		p, err := getPod(ctx, "stubborn")()
		Expect(err).NotTo(HaveOccurred(), "the pod stays during its grace period")
		Expect(p.DeletionTimestamp).NotTo(BeNil())
		Expect(*p.DeletionGracePeriodSeconds).To(Equal(int64(2)))

		last, deletedAt := wait()
		took := deletedAt.Sub(start)
		GinkgoWriter.Printf("ignoring SIGTERM with a 2 s grace: deleted after %s\n", took)
		Expect(took).To(BeNumerically(">=", 1900*time.Millisecond), "SIGKILL waited for the grace period")
		Expect(took).To(BeNumerically("<", 15*time.Second))
		Expect(last.Status.Phase).To(Equal(corev1.PodFailed))
		Expect(last.Status.ContainerStatuses).To(HaveLen(1))
		term := last.Status.ContainerStatuses[0].State.Terminated
		Expect(term).NotTo(BeNil())
		Expect(term.ExitCode).To(Equal(int32(137)), "killed by SIGKILL")
	}, SpecTimeout(60*time.Second))

	It("ends the pod as soon as a process that traps SIGTERM exits, with a Succeeded final status", func(ctx SpecContext) {
		wait, w := watchUntilDeleted(ctx, "polite")
		defer w.Stop()
		pod := &corev1.Pod{}
		pod.Name = "polite"
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(60))
		pod.Spec.Containers = []corev1.Container{helperContainer("main", "on-term", "0", "out", "ready", "sleep", "forever")}
		createAndBind(ctx, pod)
		Eventually(func() (string, error) { return podLogs(ctx, "polite", "main", "") }).WithContext(ctx).Should(ContainSubstring("ready"))

		start := time.Now()
		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
		last, deletedAt := wait()
		took := deletedAt.Sub(start)
		GinkgoWriter.Printf("trapping SIGTERM with a 60 s grace: deleted after %s\n", took)
		Expect(took).To(BeNumerically("<", 20*time.Second), "far sooner than the 60 s grace")
		Expect(last.Status.Phase).To(Equal(corev1.PodSucceeded))
		term := last.Status.ContainerStatuses[0].State.Terminated
		Expect(term).NotTo(BeNil())
		Expect(term.ExitCode).To(BeZero())
	}, SpecTimeout(60*time.Second))

	It("kills sooner when a second DELETE shortens the grace period", func(ctx SpecContext) {
		pod := &corev1.Pod{}
		pod.Name = "shortened"
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(120))
		pod.Spec.Containers = []corev1.Container{helperContainer("main", "ignore-term", "out", "ready", "sleep", "forever")}
		createAndBind(ctx, pod)
		Eventually(func() (string, error) { return podLogs(ctx, "shortened", "main", "") }).WithContext(ctx).Should(ContainSubstring("ready"))
		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
		Consistently(getPod(ctx, "shortened")).WithContext(ctx).WithTimeout(time.Second).Should(HaveField("DeletionTimestamp", Not(BeNil())))
		Expect(suite.c.Delete(ctx, pod, client.GracePeriodSeconds(1))).To(Succeed())
		Eventually(func() error { _, err := getPod(ctx, "shortened")(); return err }).WithContext(ctx).
			WithTimeout(20 * time.Second).Should(Satisfy(apierrors.IsNotFound))
	}, SpecTimeout(60*time.Second))
})
