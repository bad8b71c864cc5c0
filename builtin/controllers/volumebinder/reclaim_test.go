package volumebinder_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// bindAndDeleteClaim binds a claim to the volume (created with opts, pre-bound
// to it) and deletes the claim once Bound, waiting until it is gone.
func bindAndDeleteClaim(ctx context.Context, ns, volume string, opts ...pvOpt) {
	GinkgoHelper()
	class := "c-" + ns
	createPV(ctx, volume, class, "1Gi", opts...)
	pvc := createClaim(ctx, ns, "data", class, "1Gi", volumeName(volume))
	Expect(boundVolume(ctx, ns, "data")).To(Equal(volume))
	Expect(c.Delete(ctx, pvc)).To(Succeed())
	Eventually(func() bool { return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(pvc), pvc)) }).Should(BeTrue())
}

// volumeState returns the volume's phase and message ("gone" once deleted).
func volumeState(ctx context.Context, name string) func(Gomega) string {
	return func(g Gomega) string {
		pv := &corev1.PersistentVolume{}
		err := c.Get(ctx, client.ObjectKey{Name: name}, pv)
		if apierrors.IsNotFound(err) {
			return "gone"
		}
		g.Expect(err).NotTo(HaveOccurred())
		return string(pv.Status.Phase) + ": " + pv.Status.Message
	}
}

var _ = Describe("reclaim", func() {
	It("keeps a Retain volume Released, with its claimRef", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		bindAndDeleteClaim(ctx, ns, ns+"-kept", policy(corev1.PersistentVolumeReclaimRetain))
		Eventually(volumeState(ctx, ns+"-kept")).Should(Equal("Released: "))
		pv := getPV(ctx, ns+"-kept")(Default)
		Expect(pv.Spec.ClaimRef).NotTo(BeNil())
		Expect(pv.Spec.ClaimRef.Name).To(Equal("data"))
		// A new claim of the same name does not get the released volume.
		createClaim(ctx, ns, "data", "c-"+ns, "1Gi")
		Consistently(volumeState(ctx, ns+"-kept"), "500ms").Should(Equal("Released: "))
	})

	It("deletes a Delete hostPath volume under /tmp", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		bindAndDeleteClaim(ctx, ns, ns+"-tmp", policy(corev1.PersistentVolumeReclaimDelete), hostPath("/tmp/"+ns))
		Eventually(volumeState(ctx, ns+"-tmp")).Should(Equal("gone"))
	})

	DescribeTable("fails a Delete or Recycle volume no plugin can reclaim, as Kubernetes does",
		func(ctx SpecContext, want string, opts ...pvOpt) {
			ns := env.Namespace(ctx)
			bindAndDeleteClaim(ctx, ns, ns+"-v", opts...)
			Eventually(volumeState(ctx, ns+"-v")).Should(Equal("Failed: " + strings.ReplaceAll(want, "VOLUME", ns+"-v")))
		},
		Entry("hostPath outside /tmp", "host_path deleter only supports /tmp/.+ but received provided /srv/data",
			policy(corev1.PersistentVolumeReclaimDelete), hostPath("/srv/data")),
		Entry("local", `error getting deleter volume plugin for volume "VOLUME": no deletable volume plugin matched`,
			policy(corev1.PersistentVolumeReclaimDelete), onNode("n1")),
		Entry("Recycle", "No recycler plugin found for the volume! (Recycle is deprecated and not supported: use Retain, or Delete)",
			policy(corev1.PersistentVolumeReclaimRecycle)),
	)
})

var _ = Describe("protection", func() {
	It("keeps a deleted claim while a scheduled pod uses it (kubernetes.io/pvc-protection)", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		class := "c-" + ns
		createPV(ctx, ns+"-v", class, "1Gi")
		pvc := createClaim(ctx, ns, "data", class, "1Gi")
		boundVolume(ctx, ns, "data")
		pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "app"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
		Expect(c.Create(ctx, pod)).To(Succeed())
		env.SetPodState(ctx, pod, "node-1", corev1.PodRunning, true, time.Now())
		Expect(c.Delete(ctx, pvc)).To(Succeed())
		Consistently(func(g Gomega) *api.Time { return getPVC(ctx, ns, "data")(g).DeletionTimestamp }, "500ms").ShouldNot(BeNil())
		// The volume is still Bound and protected: deleting it waits too.
		pv := getPV(ctx, ns+"-v")(Default)
		Expect(c.Delete(ctx, pv)).To(Succeed())
		Consistently(volumeState(ctx, ns+"-v"), "300ms").Should(Equal("Bound: "))
		Expect(c.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(pvc), pvc)) }).Should(BeTrue())
		Eventually(volumeState(ctx, ns+"-v")).Should(Equal("gone"))
	})

	It("makes a bound claim whose volume is gone Lost", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		class := "c-" + ns
		createPV(ctx, ns+"-v", class, "1Gi")
		createClaim(ctx, ns, "data", class, "1Gi")
		boundVolume(ctx, ns, "data")
		pv := getPV(ctx, ns+"-v")(Default)
		Expect(c.Delete(ctx, pv)).To(Succeed())
		// An administrator forces it away.
		Eventually(func(g Gomega) {
			pv := getPV(ctx, ns+"-v")(g)
			pv.Finalizers = nil
			g.Expect(c.Update(ctx, pv)).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) corev1.PersistentVolumeClaimPhase { return getPVC(ctx, ns, "data")(g).Status.Phase }).
			Should(Equal(corev1.ClaimLost))
		// The warning is recorded after the status write.
		Eventually(func() []string { return env.EventReasons(ctx, ns, "PersistentVolumeClaim", "data") }).Should(ContainElement("ClaimLost"))
	})
})
