package statefulset_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// makeUnready simulates a failing readiness probe: the pod runs, not ready.
func makeUnready(ctx SpecContext, s *appsv1.StatefulSet, name string) {
	p := podMap(ctx, s)[name]
	Expect(p.Name).To(Equal(name))
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: api.Now()}}
	Expect(c.Status().Update(ctx, &p)).To(Succeed())
}

var _ = Describe("StatefulSet OrderedReady scale-down", func() {
	// The e2e spec "Scaling should happen in predictable order and halt if
	// any stateful pod is unhealthy": scaled to 0 with every pod unready,
	// nothing goes until they are ready again, then highest first.
	It("halts while a pod above the first unhealthy one is unhealthy", func(ctx SpecContext) {
		ns := namespace(ctx)
		s := newSet(ns, "halt", 3, nil)
		Expect(c.Create(ctx, s)).To(Succeed())
		for i := range 3 {
			name := fmt.Sprintf("halt-%d", i)
			Eventually(func() map[string]corev1.Pod { return podMap(ctx, s) }).Should(HaveKey(name))
			makeReady(ctx, s, name)
		}
		Eventually(func() int32 { return getSet(ctx, s).Status.ReadyReplicas }).Should(Equal(int32(3)))
		for i := range 3 {
			makeUnready(ctx, s, fmt.Sprintf("halt-%d", i))
		}
		Eventually(func() int32 { return getSet(ctx, s).Status.ReadyReplicas }).Should(Equal(int32(0)))
		Eventually(func() error {
			cur := getSet(ctx, s)
			cur.Spec.Replicas = api.Ptr[int32](0)
			return c.Update(ctx, cur)
		}).Should(Succeed())
		Eventually(func() int64 { return getSet(ctx, s).Status.ObservedGeneration }).Should(Equal(getSet(ctx, s).Generation))
		Consistently(func() []string { return podNames(ctx, s) }, "1s").Should(HaveLen(3), "halt-2 is unhealthy and not the first unhealthy pod")

		// Ready again from the top: each removal waits for the pod below. A
		// pod may go before its turn here (once the pods above it are gone it
		// is the highest, and the first unhealthy pod goes when it is the
		// highest), so one already gone or being removed is left alone.
		for i := 2; i >= 0; i-- {
			Eventually(func() error {
				p, ok := podMap(ctx, s)[fmt.Sprintf("halt-%d", i)]
				if !ok {
					return nil
				}
				p.Status.Phase = corev1.PodRunning
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: api.Now()}}
				if err := c.Status().Update(ctx, &p); err != nil && !apierrors.IsNotFound(err) {
					return err // a conflict: read it again
				}
				return nil
			}).Should(Succeed())
		}
		Eventually(func() []string { return podNames(ctx, s) }).Should(BeEmpty())
		Expect(events(ctx, s)).To(ContainElements(
			"Normal/SuccessfulDelete: delete Pod halt-2 in StatefulSet halt successful",
			"Normal/SuccessfulDelete: delete Pod halt-0 in StatefulSet halt successful"))
	})

	It("removes the first unhealthy pod when it is the highest", func(ctx SpecContext) {
		ns := namespace(ctx)
		s := newSet(ns, "top", 2, nil)
		Expect(c.Create(ctx, s)).To(Succeed())
		for i := range 2 {
			name := fmt.Sprintf("top-%d", i)
			Eventually(func() map[string]corev1.Pod { return podMap(ctx, s) }).Should(HaveKey(name))
			makeReady(ctx, s, name)
		}
		makeUnready(ctx, s, "top-1")
		Eventually(func() error {
			cur := getSet(ctx, s)
			cur.Spec.Replicas = api.Ptr[int32](1)
			return c.Update(ctx, cur)
		}).Should(Succeed())
		Eventually(func() []string { return podNames(ctx, s) }).Should(Equal([]string{"top-0"}))
	})
})
