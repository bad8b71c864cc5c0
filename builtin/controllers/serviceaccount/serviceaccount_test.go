package serviceaccount_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/serviceaccount"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("serviceaccount", func() {
	It("creates the default ServiceAccount in a new namespace and recreates it", func(ctx SpecContext) {
		ns := &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: "sa-new"}}
		Expect(c.Create(ctx, ns)).To(Succeed())
		key := client.ObjectKey{Namespace: ns.Name, Name: serviceaccount.DefaultName}
		sa := &corev1.ServiceAccount{}
		Eventually(func() error { return c.Get(ctx, key, sa) }).Should(Succeed())
		uid := sa.UID

		Expect(c.Delete(ctx, sa)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, key, sa)).To(Succeed())
			g.Expect(sa.UID).NotTo(Equal(uid))
		}).Should(Succeed())
	})

	It("covers namespaces that existed before the controller started", func(ctx SpecContext) {
		sa := &corev1.ServiceAccount{}
		Eventually(func() error {
			return c.Get(ctx, client.ObjectKey{Namespace: "default", Name: serviceaccount.DefaultName}, sa)
		}).Should(Succeed())
	})
})
