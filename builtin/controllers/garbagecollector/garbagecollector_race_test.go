package garbagecollector_test

import (
	"fmt"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// These specs race the collector against clients that take dependents away
// from their owners. The collector must decide on the live dependent, never on
// its graph alone, so none of them may be collected. Each spec does many
// rounds at once: a collector that trusts its graph loses some of them.

// secretOwner creates a Secret to own ConfigMaps: owner and dependents come
// from different informers, whose events reach the graph in any order.
func secretOwner(ctx SpecContext, ns, name string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name}}
	Expect(c.Create(ctx, s)).To(Succeed())
	s.SetGroupVersionKind(api.GroupVersionKind{Version: "v1", Kind: "Secret"})
	return s
}

// expectAllKeptWithoutOwners checks that every dependent survives, without
// ownerReferences, for a while.
func expectAllKeptWithoutOwners(ctx SpecContext, deps []*corev1.ConfigMap) {
	Consistently(func(g Gomega) {
		for _, d := range deps {
			cur := &corev1.ConfigMap{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(d), cur)).To(Succeed(), "dependent %s was collected", d.Name)
			g.Expect(cur.UID).To(Equal(d.UID))
			g.Expect(cur.OwnerReferences).To(BeEmpty())
		}
	}, "1500ms", "100ms").Should(Succeed())
}

var _ = Describe("garbage collector racing clients", func() {
	const dependents = 60

	It("never collects dependents orphaned by a busy collector", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		owner := secretOwner(ctx, ns, "owner")
		var deps []*corev1.ConfigMap
		for i := range dependents {
			deps = append(deps, configMap(ctx, ns, fmt.Sprintf("dep-%d", i), nil, ownerRef(owner, true)))
		}
		// Once a later ConfigMap with a dangling reference is collected, the
		// graph knows every dependent (one informer sees ConfigMaps in order).
		marker := configMap(ctx, ns, "marker", nil, api.OwnerReference{
			APIVersion: "v1", Kind: "Secret", Name: "ghost", UID: "00000000-0000-0000-0000-000000000003",
		})
		Eventually(gone(ctx, marker)).Should(BeTrue())

		// A second owner deleted in the background at the same time keeps the
		// collector's workers busy.
		busy := secretOwner(ctx, ns, "busy")
		for i := range dependents {
			configMap(ctx, ns, fmt.Sprintf("busy-%d", i), nil, ownerRef(busy, false))
		}
		Expect(c.Delete(ctx, busy)).To(Succeed())
		Expect(c.Delete(ctx, owner, client.PropagationPolicy(api.DeletePropagationOrphan))).To(Succeed())
		Eventually(gone(ctx, owner)).Should(BeTrue())
		expectAllKeptWithoutOwners(ctx, deps)
	})

	It("never collects a dependent whose ownerReferences a client removed before deleting its owner", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		owners := make([]*corev1.Secret, dependents)
		deps := make([]*corev1.ConfigMap, dependents)
		for i := range dependents {
			owners[i] = secretOwner(ctx, ns, fmt.Sprintf("owner-%d", i))
			deps[i] = configMap(ctx, ns, fmt.Sprintf("dep-%d", i), nil, ownerRef(owners[i], false))
		}
		var wg sync.WaitGroup
		for i := range dependents {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				d := deps[i]
				Expect(c.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
				d.OwnerReferences = nil
				Expect(c.Update(ctx, d)).To(Succeed())
				Expect(c.Delete(ctx, owners[i], client.PropagationPolicy(api.DeletePropagationBackground))).To(Succeed())
			}()
		}
		wg.Wait()
		expectAllKeptWithoutOwners(ctx, deps)
	})
})
