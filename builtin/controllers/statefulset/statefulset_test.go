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

	It("replaces up to maxUnavailable pods at a time", func(ctx SpecContext) {
		ns := namespace(ctx)
		s := newSet(ns, "wide", 4, func(s *appsv1.StatefulSet) {
			s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
			s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: api.Ptr(api.FromString("50%"))}}
		})
		Expect(c.Create(ctx, s)).To(Succeed())
		Eventually(func() []string { return podNames(ctx, s) }).Should(HaveLen(4))
		for _, n := range podNames(ctx, s) {
			makeReady(ctx, s, n)
		}
		Eventually(func() int32 { return getSet(ctx, s).Status.AvailableReplicas }).Should(Equal(int32(4)))
		Eventually(func() error {
			cur := getSet(ctx, s)
			cur.Spec.Template.Spec.Containers[0].Image = "db:2"
			return c.Update(ctx, cur)
		}).Should(Succeed())
		images := func() map[string]string {
			out := map[string]string{}
			for n, p := range podMap(ctx, s) {
				out[n] = p.Spec.Containers[0].Image
			}
			return out
		}
		// Two (50% of 4) at a time, highest ordinals first.
		Eventually(images).Should(Equal(map[string]string{"wide-0": "db:1", "wide-1": "db:1", "wide-2": "db:2", "wide-3": "db:2"}))
		Consistently(images, "300ms").Should(HaveKeyWithValue("wide-1", "db:1"))
		makeReady(ctx, s, "wide-3")
		// One unavailable: one more may go.
		Eventually(images).Should(HaveKeyWithValue("wide-1", "db:2"))
		Expect(images()).To(HaveKeyWithValue("wide-0", "db:1"))
		makeReady(ctx, s, "wide-2")
		makeReady(ctx, s, "wide-1")
		Eventually(images).Should(HaveKeyWithValue("wide-0", "db:2"))
		makeReady(ctx, s, "wide-0")
		Eventually(func() bool {
			st := getSet(ctx, s).Status
			return st.CurrentRevision == st.UpdateRevision && st.UpdatedReplicas == 4 && st.AvailableReplicas == 4
		}).Should(BeTrue())
	})

	It("counts a pod available only after minReadySeconds", func(ctx SpecContext) {
		ns := namespace(ctx)
		s := newSet(ns, "slow", 1, func(s *appsv1.StatefulSet) { s.Spec.MinReadySeconds = 2 })
		Expect(c.Create(ctx, s)).To(Succeed())
		Eventually(func() []string { return podNames(ctx, s) }).Should(HaveLen(1))
		makeReady(ctx, s, "slow-0")
		Eventually(func() int32 { return getSet(ctx, s).Status.ReadyReplicas }).Should(Equal(int32(1)))
		Expect(getSet(ctx, s).Status.AvailableReplicas).To(BeZero())
		Eventually(func() int32 { return getSet(ctx, s).Status.AvailableReplicas }, "5s").Should(Equal(int32(1)))
	})

	It("applies persistentVolumeClaimRetentionPolicy through claim owner references", func(ctx SpecContext) {
		ns := namespace(ctx)
		s := newSet(ns, "keep", 2, func(s *appsv1.StatefulSet) {
			s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
			s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
				ObjectMeta: api.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": api.MustParseQuantity("1Gi")}}},
			}}
		})
		Expect(c.Create(ctx, s)).To(Succeed())
		Eventually(func() []string { return podNames(ctx, s) }).Should(HaveLen(2))
		owners := func(name string) func() []string {
			return func() []string {
				pvc := &corev1.PersistentVolumeClaim{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pvc); err != nil {
					return []string{"gone"}
				}
				out := []string{}
				for _, ref := range pvc.OwnerReferences {
					out = append(out, ref.Kind+"/"+ref.Name)
				}
				return out
			}
		}
		// Retain (the default): no owner.
		Expect(owners("data-keep-0")()).To(BeEmpty())

		// whenDeleted=Delete: the set owns its claims.
		update := func(mutate func(*appsv1.StatefulSet)) {
			Eventually(func() error {
				cur := getSet(ctx, s)
				mutate(cur)
				return c.Update(ctx, cur)
			}).Should(Succeed())
		}
		update(func(s *appsv1.StatefulSet) {
			s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType}
		})
		Eventually(owners("data-keep-0")).Should(Equal([]string{"StatefulSet/keep"}))
		Eventually(owners("data-keep-1")).Should(Equal([]string{"StatefulSet/keep"}))

		// whenScaled=Retain: a scale-down keeps the claim, still the set's.
		update(func(s *appsv1.StatefulSet) { s.Spec.Replicas = api.Ptr[int32](1) })
		Eventually(func() []string { return podNames(ctx, s) }).Should(Equal([]string{"keep-0"}))
		Consistently(owners("data-keep-1"), "300ms").Should(Equal([]string{"StatefulSet/keep"}))

		// whenScaled=Delete: the removed pod owns its claim, which goes with
		// it (garbage collector).
		update(func(s *appsv1.StatefulSet) {
			s.Spec.Replicas = api.Ptr[int32](2)
			s.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
		})
		Eventually(func() []string { return podNames(ctx, s) }).Should(HaveLen(2))
		update(func(s *appsv1.StatefulSet) { s.Spec.Replicas = api.Ptr[int32](1) })
		Eventually(owners("data-keep-1")).Should(Equal([]string{"gone"}))
		Expect(owners("data-keep-0")()).To(Equal([]string{"StatefulSet/keep"}))

		// whenDeleted=Delete: deleting the set deletes the remaining claims.
		Expect(c.Delete(ctx, getSet(ctx, s))).To(Succeed())
		Eventually(owners("data-keep-0")).Should(Equal([]string{"gone"}))
	})
})
