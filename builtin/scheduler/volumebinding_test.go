package scheduler_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	storagev1 "github.com/converge-dev/converge/builtin/api/storage/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/volumebinding"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// createClaim creates a claim (with selected-node when node is set, as if a
// consumer had been scheduled there); it is deleted when the spec ends.
func createClaim(ctx context.Context, ns, name, node string) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name}}
	if node != "" {
		pvc.Annotations = map[string]string{volumebinding.AnnSelectedNode: node}
	}
	pvc.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	pvc.Spec.Resources.Requests = corev1.ResourceList{"storage": api.MustParseQuantity("1Gi")}
	Expect(c.Create(ctx, pvc)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(c.Delete(ctx, pvc))).To(Succeed()) })
	return pvc
}

// claimNode returns the claim's selected-node once it is Bound, else "".
func claimNode(ctx context.Context, ns, name string) func() string {
	return func() string {
		var pvc corev1.PersistentVolumeClaim
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &pvc); err != nil || pvc.Status.Phase != corev1.ClaimBound {
			return ""
		}
		return pvc.Annotations[volumebinding.AnnSelectedNode]
	}
}

// createLocalVolumeAndClaim creates a 1Gi local volume of class on node
// (node affinity on metadata.name) and the claim "data" of that class; both
// are deleted when the spec ends.
func createLocalVolumeAndClaim(ctx context.Context, ns, class, node string) (*corev1.PersistentVolume, *corev1.PersistentVolumeClaim) {
	pv := &corev1.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: "local-" + ns}, Spec: corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{"storage": api.MustParseQuantity("1Gi")},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName:       class,
		PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disk"}},
		NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}},
	}}
	Expect(c.Create(ctx, pv)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(c.Delete(ctx, pv))).To(Succeed()) })
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName: api.Ptr(class),
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": api.MustParseQuantity("1Gi")}},
	}}
	Expect(c.Create(ctx, pvc)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(c.Delete(ctx, pvc))).To(Succeed()) })
	return pv, pvc
}

func withClaim(volume, claim string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
		}})
	}
}

var _ = Describe("VolumeBinding", func() {
	It("places pods on their bound claim's node, against the score", func(ctx SpecContext) {
		ns := namespace(ctx)
		// vb-a has the more free cpu, so LeastAllocated prefers it.
		createNode(ctx, "vb-a", "8", "16Gi")
		createNode(ctx, "vb-b", "2", "16Gi")
		createClaim(ctx, ns, "data", "vb-b")
		Eventually(claimNode(ctx, ns, "data")).Should(Equal("vb-b"))
		var pods []*corev1.Pod
		for _, name := range []string{"p1", "p2", "p3"} {
			pods = append(pods, createPod(ctx, ns, name, requests("100m", "128Mi"), withClaim("data", "data")))
		}
		free := createPod(ctx, ns, "free", requests("100m", "128Mi"))
		for _, p := range pods {
			Eventually(nodeNameOf(ctx, p)).Should(Equal("vb-b"))
		}
		Eventually(nodeNameOf(ctx, free)).Should(Equal("vb-a"))
	})

	It("places a pod whose claim is bound to a PersistentVolume on a node its node affinity admits", func(ctx SpecContext) {
		ns := namespace(ctx)
		// vb-a has the more free cpu, so LeastAllocated prefers it.
		createNode(ctx, "vb-a", "8", "16Gi")
		createNode(ctx, "vb-b", "2", "16Gi")
		pv, pvc := createLocalVolumeAndClaim(ctx, ns, "local-"+ns, "vb-b")
		Eventually(func(g Gomega) string {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(pvc), pvc)).To(Succeed())
			g.Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound))
			return pvc.Spec.VolumeName
		}).Should(Equal(pv.Name))
		p := createPod(ctx, ns, "app", requests("100m", "128Mi"), withClaim("data", "data"))
		Eventually(nodeNameOf(ctx, p)).Should(Equal("vb-b"))
	})

	It("places a pod whose claim waits for its first consumer on a node with a matching local volume", func(ctx SpecContext) {
		ns := namespace(ctx)
		// vb-a has the more free cpu, so LeastAllocated prefers it.
		createNode(ctx, "vb-a", "8", "16Gi")
		createNode(ctx, "vb-b", "2", "16Gi")
		wffc := storagev1.VolumeBindingWaitForFirstConsumer
		sc := &storagev1.StorageClass{ObjectMeta: api.ObjectMeta{Name: "local-" + ns}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc}
		Expect(c.Create(ctx, sc)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(c.Delete(ctx, sc)).To(Succeed()) })
		pv, pvc := createLocalVolumeAndClaim(ctx, ns, sc.Name, "vb-b")
		p := createPod(ctx, ns, "app", requests("100m", "128Mi"), withClaim("data", "data"))
		Eventually(nodeNameOf(ctx, p)).Should(Equal("vb-b"))
		Eventually(func(g Gomega) string {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(pvc), pvc)).To(Succeed())
			g.Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound))
			return pvc.Spec.VolumeName
		}).Should(Equal(pv.Name))
	})

	It("explains a volume node affinity conflict like Kubernetes", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "vb-a", "8", "16Gi")
		createNode(ctx, "vb-b", "2", "16Gi")
		createClaim(ctx, ns, "data", "vb-b")
		Eventually(claimNode(ctx, ns, "data")).Should(Equal("vb-b"))
		// Fits vb-a's cpu only, but the claim is on vb-b.
		p := createPod(ctx, ns, "big", requests("4", "1Gi"), withClaim("data", "data"))
		const msg = "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had volume node affinity conflict. preemption: 0/2 nodes are available: "
		Eventually(scheduledCondition(ctx, p)).Should(And(Not(BeNil()), HaveField("Reason", "Unschedulable"), HaveField("Message", HavePrefix(msg))))
		Eventually(eventsOf(ctx, p, "FailedScheduling")).Should(ContainElement(HavePrefix("Warning " + msg)))
		Consistently(nodeNameOf(ctx, p), "500ms").Should(BeEmpty())
	})

	It("keeps a pod with a missing claim Pending until the claim is created, then follows the binding", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "vb-a", "4", "16Gi")
		createNode(ctx, "vb-b", "4", "16Gi")
		first := createPod(ctx, ns, "first", requests("1", "1Gi"), withClaim("data", "later"))
		const msg = `0/2 nodes are available: persistentvolumeclaim "later" not found. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.`
		Eventually(scheduledCondition(ctx, first)).Should(And(Not(BeNil()), HaveField("Reason", "Unschedulable"), HaveField("Message", msg)))
		Eventually(eventsOf(ctx, first, "FailedScheduling")).Should(ContainElement("Warning " + msg))
		Consistently(nodeNameOf(ctx, first), "300ms").Should(BeEmpty())

		// The claim's creation moves the pod back at once (the suite keeps the
		// 5 minute flush), and the binder then binds the claim to its node.
		createClaim(ctx, ns, "later", "")
		Eventually(nodeNameOf(ctx, first)).ShouldNot(BeEmpty())
		node := nodeNameOf(ctx, first)()
		Eventually(claimNode(ctx, ns, "later")).Should(Equal(node))

		// LeastAllocated would put a second pod on the other node; the claim
		// keeps it with the first.
		second := createPod(ctx, ns, "second", requests("1", "1Gi"), withClaim("data", "later"))
		Eventually(nodeNameOf(ctx, second)).Should(Equal(node))
	})

	It("keeps the consumers of an unbound claim together while the binder catches up", func(ctx SpecContext) {
		ns := namespace(ctx)
		createNode(ctx, "vb-a", "4", "16Gi")
		createNode(ctx, "vb-b", "4", "16Gi")
		createClaim(ctx, ns, "shared", "")
		// Created together: LeastAllocated alone would spread them over both
		// nodes before the binder binds the claim to the first one's.
		var pods []*corev1.Pod
		for _, name := range []string{"c1", "c2", "c3", "c4"} {
			pods = append(pods, createPod(ctx, ns, name, requests("500m", "1Gi"), withClaim("data", "shared")))
		}
		Eventually(claimNode(ctx, ns, "shared")).ShouldNot(BeEmpty())
		node := claimNode(ctx, ns, "shared")()
		for _, p := range pods {
			Eventually(nodeNameOf(ctx, p)).Should(Equal(node))
		}
	})
})
