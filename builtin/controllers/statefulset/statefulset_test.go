package statefulset_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("StatefulSet", func() {
	It("creates ordinals in order, one Running and Ready at a time, with claims, and scales down in reverse", func(ctx SpecContext) {
		ns := namespace(ctx)
		s := newSet(ns, "web", 3, func(s *appsv1.StatefulSet) {
			s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
				ObjectMeta: api.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": api.MustParseQuantity("1Gi")}}},
			}}
			s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType}
		})
		Expect(c.Create(ctx, s)).To(Succeed())
		for i := range 3 {
			name := fmt.Sprintf("web-%d", i)
			Eventually(func() []string { return podNames(ctx, s) }).Should(HaveLen(i + 1))
			Consistently(func() []string { return podNames(ctx, s) }, "200ms").Should(HaveLen(i+1), "OrderedReady waits for %s", name)
			p := podMap(ctx, s)[name]
			Expect(p.Labels).To(HaveKeyWithValue(appsv1.StatefulSetPodNameLabel, name))
			Expect(p.Labels).To(HaveKeyWithValue(appsv1.PodIndexLabel, fmt.Sprint(i)))
			Expect(p.Labels).To(HaveKey(appsv1.StatefulSetRevisionLabel))
			Expect(p.Spec.Hostname).To(Equal(name))
			Expect(p.Spec.Subdomain).To(Equal("web"))
			Expect(p.Spec.Volumes).To(ContainElement(corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}}))
			Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data-" + name}, &corev1.PersistentVolumeClaim{})).To(Succeed())
			makeReady(ctx, s, name)
		}
		Eventually(func() appsv1.StatefulSetStatus { return getSet(ctx, s).Status }).Should(And(
			HaveField("Replicas", int32(3)), HaveField("ReadyReplicas", int32(3)), HaveField("AvailableReplicas", int32(3)),
			HaveField("CurrentReplicas", int32(3)), HaveField("UpdatedReplicas", int32(3))))
		st := getSet(ctx, s).Status
		Expect(st.CurrentRevision).To(Equal(st.UpdateRevision))
		Eventually(func() []string { return events(ctx, s) }).Should(ContainElement("Normal/SuccessfulCreate: create Pod web-0 in StatefulSet web successful"))

		cur := getSet(ctx, s)
		Eventually(func() error {
			cur = getSet(ctx, s)
			cur.Spec.Replicas = api.Ptr[int32](1)
			return c.Update(ctx, cur)
		}).Should(Succeed())
		Eventually(func() []string { return podNames(ctx, s) }).Should(Equal([]string{"web-0"}))
		Eventually(func() []string { return events(ctx, s) }).Should(ContainElements(
			"Normal/SuccessfulDelete: delete Pod web-2 in StatefulSet web successful",
			"Normal/SuccessfulDelete: delete Pod web-1 in StatefulSet web successful"))
		// whenScaled: Delete removed the claims of the removed ordinals.
		Eventually(func() bool {
			return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data-web-2"}, &corev1.PersistentVolumeClaim{}) != nil
		}).Should(BeTrue())
		Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data-web-0"}, &corev1.PersistentVolumeClaim{})).To(Succeed())
	})

	It("creates all pods at once with Parallel", func(ctx SpecContext) {
		ns := namespace(ctx)
		s := newSet(ns, "par", 3, func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement })
		Expect(c.Create(ctx, s)).To(Succeed())
		Eventually(func() []string { return podNames(ctx, s) }).Should(Equal([]string{"par-0", "par-1", "par-2"}))
	})

	It("rolls out a new revision from the highest ordinal down to the partition", func(ctx SpecContext) {
		ns := namespace(ctx)
		s := newSet(ns, "roll", 3, func(s *appsv1.StatefulSet) {
			s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
			s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: api.Ptr[int32](1)}}
		})
		Expect(c.Create(ctx, s)).To(Succeed())
		Eventually(func() []string { return podNames(ctx, s) }).Should(HaveLen(3))
		for _, n := range podNames(ctx, s) {
			makeReady(ctx, s, n)
		}
		Eventually(func() int32 { return getSet(ctx, s).Status.ReadyReplicas }).Should(Equal(int32(3)))
		oldRev := getSet(ctx, s).Status.UpdateRevision

		cur := getSet(ctx, s)
		Eventually(func() error {
			cur = getSet(ctx, s)
			cur.Spec.Template.Spec.Containers[0].Image = "db:2"
			return c.Update(ctx, cur)
		}).Should(Succeed())
		image := func(name string) string {
			p, ok := podMap(ctx, s)[name]
			if !ok {
				return ""
			}
			return p.Spec.Containers[0].Image
		}
		// roll-2 first; roll-1 waits until roll-2 is ready again.
		Eventually(func() string { return image("roll-2") }).Should(Equal("db:2"))
		Expect(image("roll-1")).To(Equal("db:1"))
		makeReady(ctx, s, "roll-2")
		Eventually(func() string { return image("roll-1") }).Should(Equal("db:2"))
		makeReady(ctx, s, "roll-1")
		// roll-0 is below the partition and keeps the old revision.
		Consistently(func() string { return image("roll-0") }, "300ms").Should(Equal("db:1"))
		st := getSet(ctx, s).Status
		Expect(st.CurrentRevision).To(Equal(oldRev))
		Expect(st.UpdateRevision).NotTo(Equal(oldRev))
		Eventually(func() int32 { return getSet(ctx, s).Status.UpdatedReplicas }).Should(Equal(int32(2)))
		Expect(podMap(ctx, s)["roll-0"].Labels).To(HaveKeyWithValue(appsv1.StatefulSetRevisionLabel, oldRev))

		// Deleting roll-0 recreates it from the current revision (below the
		// partition); lowering the partition finishes the rollout.
		p := podMap(ctx, s)["roll-0"]
		Expect(c.Delete(ctx, &p)).To(Succeed())
		Eventually(func() string { return image("roll-0") }).Should(Equal("db:1"))
		makeReady(ctx, s, "roll-0")
		Eventually(func() error {
			cur = getSet(ctx, s)
			cur.Spec.UpdateStrategy.RollingUpdate.Partition = api.Ptr[int32](0)
			return c.Update(ctx, cur)
		}).Should(Succeed())
		Eventually(func() string { return image("roll-0") }).Should(Equal("db:2"))
		makeReady(ctx, s, "roll-0")
		Eventually(func() bool {
			st := getSet(ctx, s).Status
			return st.CurrentRevision == st.UpdateRevision && st.UpdatedReplicas == 3
		}).Should(BeTrue())
	})
})
