package garbagecollector_test

import (
	"github.com/converge-dev/converge/internal/shared"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

const holdFinalizer = "test.converge.dev/hold"

var _ = Describe("garbage collector", func() {
	It("deletes a dependent in the background once its owner is gone", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		owner := configMap(ctx, ns, "owner", nil)
		dep := configMap(ctx, ns, "dep", nil, ownerRef(owner, false))
		Expect(c.Delete(ctx, owner)).To(Succeed())
		Eventually(gone(ctx, dep)).Should(BeTrue())
	})

	It("keeps a foreground-deleted owner until its blocking dependent is gone", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		owner := configMap(ctx, ns, "owner", nil)
		dep := configMap(ctx, ns, "dep", []string{holdFinalizer}, ownerRef(owner, true))
		Expect(c.Delete(ctx, owner, client.PropagationPolicy(api.DeletePropagationForeground))).To(Succeed())

		// The collector deletes the dependent; its finalizer holds it.
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
			g.Expect(dep.DeletionTimestamp).NotTo(BeNil())
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(owner), owner)).To(Succeed())
			g.Expect(owner.DeletionTimestamp).NotTo(BeNil())
			g.Expect(owner.Finalizers).To(ContainElement(api.FinalizerDeleteDependents))
		}, "500ms", "100ms").Should(Succeed())

		dep.Finalizers = nil
		Expect(c.Update(ctx, dep)).To(Succeed())
		Eventually(gone(ctx, dep)).Should(BeTrue())
		Eventually(gone(ctx, owner)).Should(BeTrue())
	})

	It("orphans dependents of an owner deleted with propagationPolicy Orphan", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		owner := configMap(ctx, ns, "owner", nil)
		other := configMap(ctx, ns, "other", nil)
		dep := configMap(ctx, ns, "dep", nil, ownerRef(owner, true), ownerRef(other, false))
		Expect(c.Delete(ctx, owner, client.PropagationPolicy(api.DeletePropagationOrphan))).To(Succeed())
		Eventually(gone(ctx, owner)).Should(BeTrue())
		Expect(c.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
		Expect(dep.OwnerReferences).To(HaveLen(1))
		Expect(dep.OwnerReferences[0].UID).To(Equal(other.UID))

		solo := configMap(ctx, ns, "solo-owner", nil)
		soloDep := configMap(ctx, ns, "solo-dep", nil, ownerRef(solo, false))
		Expect(c.Delete(ctx, solo, client.PropagationPolicy(api.DeletePropagationOrphan))).To(Succeed())
		Eventually(gone(ctx, solo)).Should(BeTrue())
		Consistently(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(soloDep), soloDep)).To(Succeed())
			g.Expect(soloDep.OwnerReferences).To(BeEmpty())
		}, "500ms", "100ms").Should(Succeed())
	})

	It("collects an object whose only owner never existed", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		dep := configMap(ctx, ns, "dangling", nil, api.OwnerReference{
			APIVersion: "v1", Kind: "ConfigMap", Name: "ghost", UID: "00000000-0000-0000-0000-000000000001",
		})
		Eventually(gone(ctx, dep)).Should(BeTrue())
	})

	It("drops a dangling reference but keeps an object with a live owner", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		owner := configMap(ctx, ns, "owner", nil)
		dep := configMap(ctx, ns, "dep", nil, ownerRef(owner, false), api.OwnerReference{
			APIVersion: "v1", Kind: "ConfigMap", Name: "ghost", UID: "00000000-0000-0000-0000-000000000002",
		})
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
			g.Expect(dep.OwnerReferences).To(HaveLen(1))
			g.Expect(dep.OwnerReferences[0].UID).To(Equal(owner.UID))
		}).Should(Succeed())
	})

	It("collects a custom resource owned by a ConfigMap", func(ctx SpecContext) {
		applyCRD(ctx, shared.Path("conformance/crds/samplecontroller.k8s.io_foos.yaml"))
		ns := newNamespace(ctx)
		owner := configMap(ctx, ns, "owner", nil)
		foo := &api.Unstructured{Object: map[string]any{
			"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
			"spec": map[string]any{"deploymentName": "x", "replicas": int64(1)},
		}}
		foo.SetNamespace(ns)
		foo.SetName("foo")
		foo.SetOwnerReferences([]api.OwnerReference{ownerRef(owner, false)})
		Eventually(func() error { return c.Create(ctx, foo) }).Should(Succeed())
		Expect(c.Delete(ctx, owner)).To(Succeed())
		Eventually(gone(ctx, foo)).Should(BeTrue())
	})

	It("resolves a namespaced object's owner of a cluster-scoped kind", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		owner := &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: ns + "-owner"}}
		Expect(c.Create(ctx, owner)).To(Succeed())
		owner.SetGroupVersionKind(api.GroupVersionKind{Version: "v1", Kind: "Namespace"})
		dep := configMap(ctx, ns, "dep", nil, ownerRef(owner, false))
		Consistently(func() error { return c.Get(ctx, client.ObjectKeyFromObject(dep), dep) }, "500ms", "100ms").Should(Succeed())
		Expect(c.Delete(ctx, owner)).To(Succeed())
		Eventually(gone(ctx, dep)).Should(BeTrue())
	})
})
