package namespace_test

import (
	"github.com/converge-dev/converge/internal/shared"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

const holdFinalizer = "test.converge.dev/hold"

// deletableNamespace creates a namespace; the API server gives it the
// "kubernetes" spec finalizer, which makes its deletion graceful.
func deletableNamespace(ctx SpecContext) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: newNamespace(ctx)}}
	Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(ns), ns)).To(Succeed())
		g.Expect(ns.Spec.Finalizers).To(ContainElement(corev1.FinalizerKubernetes))
	}).Should(Succeed())
	return ns
}

func condition(ns *corev1.Namespace, t corev1.NamespaceConditionType) *corev1.NamespaceCondition {
	for i := range ns.Status.Conditions {
		if ns.Status.Conditions[i].Type == t {
			return &ns.Status.Conditions[i]
		}
	}
	return nil
}

var _ = Describe("namespace lifecycle", func() {
	It("deletes all content, custom resources included, then the namespace", func(ctx SpecContext) {
		applyCRD(ctx, shared.Path("conformance/crds/samplecontroller.k8s.io_foos.yaml"))
		ns := deletableNamespace(ctx)
		cm1 := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns.Name, Name: "a"}}
		cm2 := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns.Name, Name: "b"}}
		Expect(c.Create(ctx, cm1)).To(Succeed())
		Expect(c.Create(ctx, cm2)).To(Succeed())
		deploy := &api.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"namespace": ns.Name, "name": "web"},
			"spec": map[string]any{
				"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
					"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "web:1"}}},
				},
			},
		}}
		Expect(c.Create(ctx, deploy)).To(Succeed())
		foo := &api.Unstructured{Object: map[string]any{
			"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
			"metadata": map[string]any{"namespace": ns.Name, "name": "foo"},
			"spec":     map[string]any{"deploymentName": "x", "replicas": int64(1)},
		}}
		Eventually(func() error { return c.Create(ctx, foo) }).Should(Succeed())

		Expect(c.Delete(ctx, ns)).To(Succeed())
		Eventually(gone(ctx, cm1)).Should(BeTrue())
		Eventually(gone(ctx, cm2)).Should(BeTrue())
		Eventually(gone(ctx, deploy)).Should(BeTrue())
		Eventually(gone(ctx, foo)).Should(BeTrue())
		Eventually(gone(ctx, ns)).Should(BeTrue())
	})

	It("waits for content finalizers and reports them in conditions", func(ctx SpecContext) {
		ns := deletableNamespace(ctx)
		held := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns.Name, Name: "held", Finalizers: []string{holdFinalizer}}}
		Expect(c.Create(ctx, held)).To(Succeed())
		Expect(c.Delete(ctx, ns)).To(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(ns), ns)).To(Succeed())
			g.Expect(ns.Status.Phase).To(Equal(corev1.NamespaceTerminating))
			remaining := condition(ns, corev1.NamespaceContentRemaining)
			g.Expect(remaining).NotTo(BeNil())
			g.Expect(remaining.Status).To(BeEquivalentTo("True"))
			g.Expect(remaining.Reason).To(Equal("SomeResourcesRemain"))
			g.Expect(remaining.Message).To(ContainSubstring("configmaps. has 1 resource instances"))
			fin := condition(ns, corev1.NamespaceFinalizersRemaining)
			g.Expect(fin).NotTo(BeNil())
			g.Expect(fin.Status).To(BeEquivalentTo("True"))
			g.Expect(fin.Message).To(Equal("Some content in the namespace has finalizers remaining: " + holdFinalizer + " in 1 resource instances"))
			disc := condition(ns, corev1.NamespaceDeletionDiscoveryFailure)
			g.Expect(disc).NotTo(BeNil())
			g.Expect(disc.Status).To(BeEquivalentTo("False"))
		}).Should(Succeed())
		Consistently(func() error { return c.Get(ctx, client.ObjectKeyFromObject(ns), ns) }, "500ms", "100ms").Should(Succeed())

		Expect(c.Get(ctx, client.ObjectKeyFromObject(held), held)).To(Succeed())
		Expect(held.DeletionTimestamp).NotTo(BeNil())
		held.Finalizers = nil
		Expect(c.Update(ctx, held)).To(Succeed())
		Eventually(gone(ctx, held)).Should(BeTrue())
		Eventually(gone(ctx, ns)).Should(BeTrue())
	})

	It("deletes pods first and the rest only once no pod remains", func(ctx SpecContext) {
		ns := deletableNamespace(ctx)
		pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns.Name, Name: "held", Finalizers: []string{holdFinalizer}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "c:1"}}}}
		Expect(c.Create(ctx, pod)).To(Succeed())
		cm := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns.Name, Name: "used-by-the-pod"}}
		Expect(c.Create(ctx, cm)).To(Succeed())
		Expect(c.Delete(ctx, ns)).To(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(ns), ns)).To(Succeed())
			failure := condition(ns, corev1.NamespaceDeletionContentFailure)
			g.Expect(failure).NotTo(BeNil())
			g.Expect(failure.Status).To(BeEquivalentTo("True"))
			g.Expect(failure.Message).To(ContainSubstring("1 pods remain in namespace " + ns.Name))
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
			g.Expect(pod.DeletionTimestamp).NotTo(BeNil())
		}).Should(Succeed())
		Consistently(func() error { return c.Get(ctx, client.ObjectKeyFromObject(cm), cm) }, "500ms", "100ms").Should(Succeed())

		pod.Finalizers = nil
		Expect(c.Update(ctx, pod)).To(Succeed())
		Eventually(gone(ctx, cm)).Should(BeTrue())
		Eventually(gone(ctx, ns)).Should(BeTrue())
	})
})
