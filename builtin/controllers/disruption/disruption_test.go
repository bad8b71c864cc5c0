package disruption_test

import (
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	policyv1 "github.com/converge-dev/converge/builtin/api/policy/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

var nsCount int

func newNamespace(ctx SpecContext) string {
	nsCount++
	ns := &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("disruption-%d", nsCount)}}
	Expect(c.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// runningPod creates a pod labelled app=web and reports it Running and Ready,
// as a node would.
func runningPod(ctx SpecContext, ns, name string, owner *api.OwnerReference) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
	if owner != nil {
		p.OwnerReferences = []api.OwnerReference{*owner}
	}
	Expect(c.Create(ctx, p)).To(Succeed())
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	Expect(c.Status().Update(ctx, p)).To(Succeed())
	return p
}

func budget(ctx SpecContext, ns string, minAvailable, maxUnavailable *api.IntOrString) *policyv1.PodDisruptionBudget {
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: minAvailable, MaxUnavailable: maxUnavailable,
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	Expect(c.Create(ctx, pdb)).To(Succeed())
	return pdb
}

func status(ctx SpecContext, ns string) func(Gomega) policyv1.PodDisruptionBudgetStatus {
	return func(g Gomega) policyv1.PodDisruptionBudgetStatus {
		pdb := &policyv1.PodDisruptionBudget{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, pdb)).To(Succeed())
		g.Expect(pdb.Status.ObservedGeneration).To(Equal(pdb.Generation))
		return pdb.Status
	}
}

func evict(ctx SpecContext, p *corev1.Pod) error {
	return c.SubResource("eviction").Create(ctx, p, &policyv1.Eviction{ObjectMeta: api.ObjectMeta{Namespace: p.Namespace, Name: p.Name}})
}

func int32Of(v int) *api.IntOrString { x := api.FromInt(v); return &x }

var _ = Describe("PodDisruptionBudget status and eviction", func() {
	It("counts healthy pods, spends the budget on evictions and refuses evictions it does not allow", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		budget(ctx, ns, int32Of(2), nil)
		Eventually(status(ctx, ns)).Should(And(
			HaveField("ExpectedPods", BeEquivalentTo(0)), HaveField("DisruptionsAllowed", BeEquivalentTo(0))))
		var pods []*corev1.Pod
		for i := range 3 {
			pods = append(pods, runningPod(ctx, ns, fmt.Sprintf("web-%d", i), nil))
		}
		Eventually(status(ctx, ns)).Should(And(
			HaveField("ExpectedPods", BeEquivalentTo(3)), HaveField("CurrentHealthy", BeEquivalentTo(3)),
			HaveField("DesiredHealthy", BeEquivalentTo(2)), HaveField("DisruptionsAllowed", BeEquivalentTo(1))))
		st := status(ctx, ns)(Default)
		Expect(st.Conditions).To(ContainElement(And(HaveField("Type", "DisruptionAllowed"), HaveField("Status", api.ConditionTrue),
			HaveField("Reason", "SufficientPods"))))

		Expect(evict(ctx, pods[0])).To(Succeed())
		err := evict(ctx, pods[1])
		var se *apierrors.StatusError
		Expect(errors.As(err, &se)).To(BeTrue(), "%v", err)
		Expect(se.ErrStatus.Code).To(BeEquivalentTo(429))
		Expect(se.ErrStatus.Message).To(Equal("Cannot evict pod as it would violate the pod's disruption budget."))
		Expect(se.ErrStatus.Details.Causes).To(ContainElement(HaveField("Type", policyv1.DisruptionBudgetCause)))
		Eventually(status(ctx, ns)).Should(And(
			HaveField("CurrentHealthy", BeEquivalentTo(2)), HaveField("DisruptionsAllowed", BeEquivalentTo(0)),
			HaveField("DisruptedPods", BeEmpty())))
	})

	It("takes maxUnavailable against the replicas of the pods' controller", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		rs := &appsv1.ReplicaSet{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: appsv1.ReplicaSetSpec{Replicas: api.Ptr(int32(4)), Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}}}
		Expect(c.Create(ctx, rs)).To(Succeed())
		// Four replicas wanted (no replicaset controller runs here), two there:
		// maxUnavailable 1 leaves nothing to disrupt.
		owner := &api.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: api.Ptr(true)}
		runningPod(ctx, ns, "web-a", owner)
		runningPod(ctx, ns, "web-b", owner)
		budget(ctx, ns, nil, int32Of(1))
		Eventually(status(ctx, ns)).Should(And(
			HaveField("ExpectedPods", BeEquivalentTo(4)), HaveField("DesiredHealthy", BeEquivalentTo(3)),
			HaveField("DisruptionsAllowed", BeEquivalentTo(0))))
	})

	It("fails safe when a pod has no controller but the budget is relative", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		runningPod(ctx, ns, "web-a", nil)
		pct := api.FromString("50%")
		budget(ctx, ns, &pct, nil)
		Eventually(status(ctx, ns)).Should(HaveField("Conditions", ContainElement(And(
			HaveField("Reason", "SyncFailed"), HaveField("Message", ContainSubstring(`found no controller ref for pod "web-a"`))))))
	})

	It("deletes pods that are not running without consulting the budget", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		budget(ctx, ns, int32Of(5), nil)
		p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "pending", Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
		Expect(c.Create(ctx, p)).To(Succeed())
		Expect(evict(ctx, p)).To(Succeed())
	})

	It("marks the evicted pod DisruptionTarget (EvictionByEvictionAPI) before deleting it, and honours the delete's preconditions", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		p := runningPod(ctx, ns, "kept", nil)
		// A finalizer keeps the deleted pod visible, as a node's graceful
		// termination or a Job's tracking finalizer does.
		p.Finalizers = []string{"example.com/keep"}
		Expect(c.Update(ctx, p)).To(Succeed())
		stale := "1"
		err := c.SubResource("eviction").Create(ctx, p, &policyv1.Eviction{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: p.Name},
			DeleteOptions: &api.DeleteOptions{Preconditions: &api.Preconditions{ResourceVersion: &stale}}})
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "a stale resourceVersion precondition: %v", err)
		rv := p.ResourceVersion
		Expect(c.SubResource("eviction").Create(ctx, p, &policyv1.Eviction{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: p.Name},
			DeleteOptions: &api.DeleteOptions{Preconditions: &api.Preconditions{ResourceVersion: &rv}}})).To(Succeed())
		got := &corev1.Pod{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: p.Name}, got)).To(Succeed())
		Expect(got.DeletionTimestamp).NotTo(BeNil())
		Expect(got.Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.DisruptionTarget),
			HaveField("Status", corev1.ConditionTrue), HaveField("Reason", "EvictionByEvictionAPI"), HaveField("Message", "Eviction API: evicting"))))
		Expect(got.Status.Conditions).To(ContainElement(HaveField("Type", corev1.PodReady)), "the other conditions stay")
		got.Finalizers = nil
		Expect(c.Update(ctx, got)).To(Succeed())
	})
})
