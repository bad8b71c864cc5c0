package garbagecollector_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// podCycle creates three pods that own each other in a cycle (pod1 → pod3 →
// pod2 → pod1, each reference blocking and controlling), as Kubernetes'
// "should not be blocked by dependency circle" conformance spec does.
func podCycle(ctx SpecContext, ns string) []*corev1.Pod {
	GinkgoHelper()
	pods := make([]*corev1.Pod, 3)
	for i := range pods {
		p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "pod" + string(rune('1'+i))},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
		Expect(c.Create(ctx, p)).To(Succeed())
		p.SetGroupVersionKind(api.GroupVersionKind{Version: "v1", Kind: "Pod"})
		pods[i] = p
	}
	for i, p := range pods {
		owner := pods[(i+2)%3] // pod1 ← pod3, pod2 ← pod1, pod3 ← pod2
		ref := ownerRef(owner, true)
		ref.Controller = api.Ptr(true)
		p.OwnerReferences = []api.OwnerReference{ref}
		Expect(c.Update(ctx, p)).To(Succeed())
	}
	return pods
}

var _ = Describe("garbage collector with an ownership cycle", func() {
	for first := range 3 {
		It("finishes the foreground deletion of any member: all go", func(ctx SpecContext) {
			ns := newNamespace(ctx)
			pods := podCycle(ctx, ns)
			Expect(c.Delete(ctx, pods[first], client.PropagationPolicy(api.DeletePropagationForeground),
				client.Preconditions{UID: api.Ptr(pods[first].UID)})).To(Succeed())
			for _, p := range pods {
				Eventually(gone(ctx, p)).WithTimeout(20*time.Second).Should(BeTrue(), p.Name)
			}
		}, SpecTimeout(40*time.Second))
	}

	It("finishes a chain of foreground deletions through a longer cycle of ConfigMaps", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		const n = 5
		cms := make([]*corev1.ConfigMap, n)
		for i := range cms {
			cms[i] = configMap(ctx, ns, "cm"+string(rune('a'+i)), nil)
		}
		for i, cm := range cms {
			cm.OwnerReferences = []api.OwnerReference{ownerRef(cms[(i+1)%n], true)}
			Expect(c.Update(ctx, cm)).To(Succeed())
		}
		Expect(c.Delete(ctx, cms[2], client.PropagationPolicy(api.DeletePropagationForeground))).To(Succeed())
		for _, cm := range cms {
			Eventually(gone(ctx, cm)).WithTimeout(20*time.Second).Should(BeTrue(), cm.Name)
		}
	}, SpecTimeout(40*time.Second))

	It("lets the deletion of a namespace holding the cycle finish", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		podCycle(ctx, ns)
		nsObj := &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}}
		Expect(c.Delete(ctx, nsObj, client.PropagationPolicy(api.DeletePropagationForeground))).To(Succeed())
		Eventually(gone(ctx, nsObj)).WithTimeout(30 * time.Second).Should(BeTrue())
	}, SpecTimeout(45*time.Second))
})
