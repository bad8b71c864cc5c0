package volumebinder_test

import (
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	storagev1 "github.com/converge-dev/converge/builtin/api/storage/v1"
	"github.com/converge-dev/converge/builtin/controllers/volumebinder"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

type pvOpt func(*corev1.PersistentVolume)

func modes(m ...corev1.PersistentVolumeAccessMode) pvOpt {
	return func(pv *corev1.PersistentVolume) { pv.Spec.AccessModes = m }
}
func labelled(k, v string) pvOpt {
	return func(pv *corev1.PersistentVolume) { pv.Labels = map[string]string{k: v} }
}
func policy(p corev1.PersistentVolumeReclaimPolicy) pvOpt {
	return func(pv *corev1.PersistentVolume) { pv.Spec.PersistentVolumeReclaimPolicy = p }
}
func hostPath(path string) pvOpt {
	return func(pv *corev1.PersistentVolume) { pv.Spec.HostPath = &corev1.HostPathVolumeSource{Path: path} }
}
func block() pvOpt {
	return func(pv *corev1.PersistentVolume) { pv.Spec.VolumeMode = api.Ptr(corev1.PersistentVolumeBlock) }
}
func onNode(node string) pvOpt {
	return func(pv *corev1.PersistentVolume) {
		pv.Spec.HostPath = nil
		pv.Spec.Local = &corev1.LocalVolumeSource{Path: "/mnt/disks/" + pv.Name}
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}
	}
}
func preBound(ns, claim string) pvOpt {
	return func(pv *corev1.PersistentVolume) {
		pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: claim}
	}
}

// createPV creates a volume of class with size; it is deleted when the spec
// ends.
func createPV(ctx context.Context, name, class, size string, opts ...pvOpt) *corev1.PersistentVolume {
	GinkgoHelper()
	pv := &corev1.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		Capacity:         corev1.ResourceList{"storage": api.MustParseQuantity(size)},
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName: class,
		PersistentVolumeSource: corev1.PersistentVolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: "/data/" + name}},
	}}
	for _, o := range opts {
		o(pv)
	}
	Expect(c.Create(ctx, pv)).To(Succeed())
	DeferCleanup(func(ctx context.Context) {
		Expect(client.IgnoreNotFound(c.Delete(ctx, pv))).To(Succeed())
		// A Bound volume goes once its claim is gone (pv-protection):
		// delete the claim too, and wait, so that no spec's volume is left
		// for the next spec's claims.
		cur := &corev1.PersistentVolume{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cur); err == nil && cur.Spec.ClaimRef != nil {
			claim := &corev1.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: cur.Spec.ClaimRef.Namespace, Name: cur.Spec.ClaimRef.Name}}
			Expect(client.IgnoreNotFound(c.Delete(ctx, claim))).To(Succeed())
		}
		Eventually(func() bool {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: name}, &corev1.PersistentVolume{}))
		}).
			Should(BeTrue(), "volume %s deleted", name)
	})
	// The binder has seen it once it is Available (or bound at once, to a
	// claim waiting for it).
	Eventually(func(g Gomega) corev1.PersistentVolumePhase { return getPV(ctx, name)(g).Status.Phase }).
		Should(BeElementOf(corev1.VolumeAvailable, corev1.VolumeBound), "volume %s seen", name)
	return pv
}

type pvcOpt func(*corev1.PersistentVolumeClaim)

func selecting(k, v string) pvcOpt {
	return func(pvc *corev1.PersistentVolumeClaim) {
		pvc.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{k: v}}
	}
}
func volumeName(v string) pvcOpt {
	return func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.VolumeName = v }
}
func noClass() pvcOpt {
	return func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.StorageClassName = nil }
}

// createClaim creates a ReadWriteOnce claim of class requesting size;
// it is deleted when the spec ends.
func createClaim(ctx context.Context, ns, name, class, size string, opts ...pvcOpt) *corev1.PersistentVolumeClaim {
	GinkgoHelper()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": api.MustParseQuantity(size)}},
		StorageClassName: api.Ptr(class),
	}}
	for _, o := range opts {
		o(pvc)
	}
	Expect(c.Create(ctx, pvc)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(c.Delete(ctx, pvc))).To(Succeed()) })
	return pvc
}

func getPVC(ctx context.Context, ns, name string) func(Gomega) *corev1.PersistentVolumeClaim {
	return func(g Gomega) *corev1.PersistentVolumeClaim {
		pvc := &corev1.PersistentVolumeClaim{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pvc)).To(Succeed())
		return pvc
	}
}

func getPV(ctx context.Context, name string) func(Gomega) *corev1.PersistentVolume {
	return func(g Gomega) *corev1.PersistentVolume {
		pv := &corev1.PersistentVolume{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: name}, pv)).To(Succeed())
		return pv
	}
}

// boundVolume waits until the claim is Bound and returns its volume.
func boundVolume(ctx context.Context, ns, name string) string {
	GinkgoHelper()
	var vol string
	Eventually(func(g Gomega) {
		pvc := getPVC(ctx, ns, name)(g)
		g.Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound))
		vol = pvc.Spec.VolumeName
	}).Should(Succeed())
	return vol
}

func gi(s string) api.Quantity { return api.MustParseQuantity(s) }

var _ = Describe("static binding", func() {
	It("binds a claim to the smallest Available volume that satisfies it, on both sides", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		class := "c-" + ns
		createPV(ctx, ns+"-small", class, "1Gi")
		createPV(ctx, ns+"-rox", class, "3Gi", modes(corev1.ReadOnlyMany))
		createPV(ctx, ns+"-block", class, "3Gi", block())
		createPV(ctx, ns+"-other-class", "x-"+ns, "3Gi")
		createPV(ctx, ns+"-big", class, "8Gi")
		createPV(ctx, ns+"-fit", class, "5Gi", modes(corev1.ReadWriteOnce, corev1.ReadOnlyMany))
		pvc := createClaim(ctx, ns, "data", class, "2Gi")
		Expect(boundVolume(ctx, ns, "data")).To(Equal(ns + "-fit"))

		claim := getPVC(ctx, ns, "data")(Default)
		Expect(claim.Annotations).To(HaveKeyWithValue(volumebinder.AnnBindCompleted, "yes"))
		Expect(claim.Annotations).To(HaveKeyWithValue(volumebinder.AnnBoundByController, "yes"))
		Expect(claim.Finalizers).To(ContainElement(volumebinder.FinalizerPVCProtection))
		Expect(claim.Status.Capacity["storage"].Cmp(gi("5Gi"))).To(Equal(0))
		Expect(claim.Status.AccessModes).To(Equal([]corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany}))
		Eventually(func(g Gomega) {
			pv := getPV(ctx, ns+"-fit")(g)
			g.Expect(pv.Status.Phase).To(Equal(corev1.VolumeBound))
			g.Expect(pv.Spec.ClaimRef).NotTo(BeNil())
		}).Should(Succeed())
		pv := getPV(ctx, ns+"-fit")(Default)
		Expect(pv.Spec.ClaimRef.Kind).To(Equal("PersistentVolumeClaim"))
		Expect(pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name).To(Equal(ns + "/data"))
		Expect(pv.Spec.ClaimRef.UID).To(Equal(pvc.UID))
		Expect(pv.Annotations).To(HaveKeyWithValue(volumebinder.AnnBoundByController, "yes"))
		Expect(pv.Finalizers).To(ContainElement(volumebinder.FinalizerPVProtection))
		for _, other := range []string{"-small", "-rox", "-block", "-other-class", "-big"} {
			Eventually(func(g Gomega) corev1.PersistentVolumePhase { return getPV(ctx, ns+other)(g).Status.Phase }).
				Should(Equal(corev1.VolumeAvailable), other)
		}
	})

	It("binds a claim with a selector only to a volume whose labels match", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		class := "c-" + ns
		createPV(ctx, ns+"-plain", class, "1Gi")
		createPV(ctx, ns+"-gold", class, "4Gi", labelled("tier", "gold"))
		createClaim(ctx, ns, "data", class, "1Gi", selecting("tier", "gold"))
		Expect(boundVolume(ctx, ns, "data")).To(Equal(ns + "-gold"))
	})

	It("binds a claim of class \"\" only to a volume without a class, and leaves it Pending without one", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		createPV(ctx, ns+"-classed", "c-"+ns, "1Gi")
		createClaim(ctx, ns, "waits", "", "1Gi")
		Eventually(func() []string { return env.EventReasons(ctx, ns, "PersistentVolumeClaim", "waits") }).
			Should(ContainElement("FailedBinding"))
		Expect(getPVC(ctx, ns, "waits")(Default).Status.Phase).To(Equal(corev1.ClaimPending))
		createPV(ctx, ns+"-classless", "", "1Gi")
		Expect(boundVolume(ctx, ns, "waits")).To(Equal(ns + "-classless"))
	})

	It("gives a claim without a class the default StorageClass and binds it to a volume of that class", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		sc := &storagev1.StorageClass{ObjectMeta: api.ObjectMeta{Name: "default-" + ns,
			Annotations: map[string]string{storagev1.AnnIsDefaultClass: "true"}}, Provisioner: "kubernetes.io/no-provisioner"}
		Expect(c.Create(ctx, sc)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(c.Delete(ctx, sc)).To(Succeed()) })
		createPV(ctx, ns+"-default", sc.Name, "1Gi")
		createClaim(ctx, ns, "data", "", "1Gi", noClass())
		Expect(boundVolume(ctx, ns, "data")).To(Equal(ns + "-default"))
		Expect(getPVC(ctx, ns, "data")(Default).Spec.StorageClassName).To(HaveValue(Equal(sc.Name)))
	})

	It("honours a claim's spec.volumeName and a volume's spec.claimRef", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		class := "c-" + ns
		createPV(ctx, ns+"-smallest", class, "1Gi")
		createPV(ctx, ns+"-named", class, "5Gi")
		createPV(ctx, ns+"-reserved", class, "6Gi", preBound(ns, "second"))
		createClaim(ctx, ns, "first", class, "1Gi", volumeName(ns+"-named"))
		createClaim(ctx, ns, "second", class, "1Gi")
		Expect(boundVolume(ctx, ns, "first")).To(Equal(ns + "-named"))
		Expect(boundVolume(ctx, ns, "second")).To(Equal(ns + "-reserved"))
		first := getPVC(ctx, ns, "first")(Default)
		Expect(first.Annotations).To(HaveKeyWithValue(volumebinder.AnnBindCompleted, "yes"))
		Expect(first.Annotations).NotTo(HaveKey(volumebinder.AnnBoundByController), "the user chose the volume")
		Expect(getPV(ctx, ns+"-named")(Default).Annotations).To(HaveKeyWithValue(volumebinder.AnnBoundByController, "yes"))
		reserved := getPV(ctx, ns+"-reserved")(Default)
		Expect(reserved.Annotations).NotTo(HaveKey(volumebinder.AnnBoundByController), "the user pre-bound the volume")
		Expect(reserved.Spec.ClaimRef.UID).To(Equal(getPVC(ctx, ns, "second")(Default).UID))
		Expect(getPVC(ctx, ns, "second")(Default).Annotations).To(HaveKeyWithValue(volumebinder.AnnBoundByController, "yes"))
	})

	It("does not bind a claim pre-bound to a volume that cannot satisfy it", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		class := "c-" + ns
		createPV(ctx, ns+"-tiny", class, "1Gi")
		createClaim(ctx, ns, "data", class, "2Gi", volumeName(ns+"-tiny"))
		Eventually(func() []string { return env.EventReasons(ctx, ns, "PersistentVolumeClaim", "data") }).
			Should(ContainElement("VolumeMismatch"))
		Consistently(func(g Gomega) corev1.PersistentVolumeClaimPhase { return getPVC(ctx, ns, "data")(g).Status.Phase }, "500ms").
			Should(Equal(corev1.ClaimPending))
		Expect(getPV(ctx, ns+"-tiny")(Default).Spec.ClaimRef).To(BeNil())
	})

	It("binds exactly one of two claims racing for one volume", func(ctx SpecContext) {
		for round := range 3 {
			ns := env.Namespace(ctx)
			class := "c-" + ns
			createPV(ctx, ns+"-only", class, "1Gi")
			var wg sync.WaitGroup
			for _, name := range []string{"a", "b", "c"} {
				wg.Add(1)
				go func() {
					defer GinkgoRecover()
					defer wg.Done()
					createClaim(ctx, ns, name, class, "1Gi")
				}()
			}
			wg.Wait()
			var winner string
			Eventually(func(g Gomega) {
				pv := getPV(ctx, ns+"-only")(g)
				g.Expect(pv.Status.Phase).To(Equal(corev1.VolumeBound))
				winner = pv.Spec.ClaimRef.Name
			}).Should(Succeed())
			Expect(boundVolume(ctx, ns, winner)).To(Equal(ns+"-only"), "round %d", round)
			Consistently(func(g Gomega) int {
				bound := 0
				for _, name := range []string{"a", "b", "c"} {
					pvc := getPVC(ctx, ns, name)(g)
					if pvc.Spec.VolumeName != "" || pvc.Status.Phase == corev1.ClaimBound {
						g.Expect(name).To(Equal(winner))
						bound++
					}
				}
				return bound
			}, "1s").Should(Equal(1), "round %d", round)
		}
	})
})

var _ = Describe("WaitForFirstConsumer", func() {
	It("binds once a consumer is scheduled, to a volume whose node affinity admits its node", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		mode := storagev1.VolumeBindingWaitForFirstConsumer
		sc := &storagev1.StorageClass{ObjectMeta: api.ObjectMeta{Name: "wffc-" + ns}, Provisioner: "kubernetes.io/no-provisioner",
			VolumeBindingMode: &mode}
		Expect(c.Create(ctx, sc)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(c.Delete(ctx, sc)).To(Succeed()) })
		for _, n := range []string{ns + "-n1", ns + "-n2"} {
			node := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: n, Labels: map[string]string{"kubernetes.io/hostname": n}}}
			Expect(c.Create(ctx, node)).To(Succeed())
			DeferCleanup(func(ctx context.Context) { Expect(c.Delete(ctx, node)).To(Succeed()) })
		}
		createPV(ctx, ns+"-on-n2", sc.Name, "1Gi", onNode(ns+"-n2"))
		createPV(ctx, ns+"-on-n1", sc.Name, "2Gi", onNode(ns+"-n1"))
		createClaim(ctx, ns, "data", sc.Name, "1Gi")
		Eventually(func() []string { return env.EventReasons(ctx, ns, "PersistentVolumeClaim", "data") }).
			Should(ContainElement("WaitForFirstConsumer"))
		Expect(getPVC(ctx, ns, "data")(Default).Spec.VolumeName).To(BeEmpty())
		pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "app"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
		Expect(c.Create(ctx, pod)).To(Succeed())
		env.SetPodState(ctx, pod, ns+"-n1", corev1.PodPending, false, time.Now())
		Expect(boundVolume(ctx, ns, "data")).To(Equal(ns + "-on-n1"))
		Expect(c.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	})

	It("never gives a claim of a kubernetes.io/no-provisioner class a local directory volume", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		sc := &storagev1.StorageClass{ObjectMeta: api.ObjectMeta{Name: "local-" + ns}, Provisioner: volumebinder.NoProvisioner}
		Expect(c.Create(ctx, sc)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(c.Delete(ctx, sc)).To(Succeed()) })
		createClaim(ctx, ns, "data", sc.Name, "1Gi")
		pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "app"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
		Expect(c.Create(ctx, pod)).To(Succeed())
		env.SetPodState(ctx, pod, "node-x", corev1.PodPending, false, time.Now())
		Eventually(func() []string { return env.EventReasons(ctx, ns, "PersistentVolumeClaim", "data") }).
			Should(ContainElement("ExternalProvisioning"))
		Consistently(func(g Gomega) string { return getPVC(ctx, ns, "data")(g).Spec.VolumeName }, "500ms").Should(BeEmpty())
		createPV(ctx, ns+"-late", sc.Name, "1Gi")
		Expect(boundVolume(ctx, ns, "data")).To(Equal(ns + "-late"))
		Expect(c.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	})

	It("still gives a claim no volume satisfies a local directory volume on its consumer's node", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		pvc := createClaim(ctx, ns, "data", "", "1Gi", noClass())
		pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "app"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
		Expect(c.Create(ctx, pod)).To(Succeed())
		env.SetPodState(ctx, pod, "node-x", corev1.PodPending, false, time.Now())
		Expect(boundVolume(ctx, ns, "data")).To(Equal(volumebinder.VolumeName(pvc.UID)))
		Expect(getPVC(ctx, ns, "data")(Default).Annotations).To(HaveKeyWithValue(volumebinder.AnnSelectedNode, "node-x"))
		Expect(c.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	})
})
