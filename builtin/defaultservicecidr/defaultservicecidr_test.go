package defaultservicecidr_test

import (
	"net/netip"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	networkingv1 "github.com/converge-dev/converge/builtin/api/networking/v1"
	"github.com/converge-dev/converge/builtin/defaultservicecidr"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

func get(ctx SpecContext) (*networkingv1.ServiceCIDR, error) {
	sc := &networkingv1.ServiceCIDR{}
	return sc, c.Get(ctx, client.ObjectKey{Name: defaultservicecidr.Name}, sc)
}

func ready(sc *networkingv1.ServiceCIDR) string {
	for _, cond := range sc.Status.Conditions {
		if cond.Type == networkingv1.ServiceCIDRConditionReady {
			return string(cond.Status)
		}
	}
	return ""
}

var _ = Describe("the default ServiceCIDR", Ordered, func() {
	It("is kept by the API server: the service range, Ready", func(ctx SpecContext) {
		Eventually(func(g Gomega) {
			sc, err := get(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(sc.Spec.CIDRs).To(HaveLen(1))
			_, err = netip.ParsePrefix(sc.Spec.CIDRs[0])
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ready(sc)).To(Equal("True"))
		}).Should(Succeed())
	})

	It("refuses changes to its CIDRs with Kubernetes' message", func(ctx SpecContext) {
		sc, err := get(ctx)
		Expect(err).NotTo(HaveOccurred())
		sc.Spec.CIDRs = []string{"10.0.0.0/24"}
		err = c.Update(ctx, sc)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(`spec.cidrs[0]: Invalid value: "10.0.0.0/24": field is immutable`))
	})

	It("is created again, Ready, after it was deleted", func(ctx SpecContext) {
		r, err := defaultservicecidr.New(defaultservicecidr.Options{Client: c, CIDRs: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16")}})
		Expect(err).NotTo(HaveOccurred())
		old, err := get(ctx)
		Expect(err).NotTo(HaveOccurred())
		// A reconciler configured with another range leaves the object alone.
		Expect(r.Sync(ctx)).To(Succeed())
		same, err := get(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(same.ResourceVersion).To(Equal(old.ResourceVersion))

		Expect(c.Delete(ctx, old)).To(Succeed())
		Expect(r.Sync(ctx)).To(Succeed())
		sc, err := get(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(sc.UID).NotTo(Equal(old.UID))
		Expect(sc.Spec.CIDRs).To(Equal([]string{"10.96.0.0/16"}))
		Expect(ready(sc)).To(Equal("True"))
	})

	It("keeps a Ready=False someone else set", func(ctx SpecContext) {
		sc, err := get(ctx)
		Expect(err).NotTo(HaveOccurred())
		sc.Status.Conditions = []api.Condition{{Type: "Ready", Status: api.ConditionFalse, Reason: "Broken", Message: "x",
			LastTransitionTime: api.NewTime(time.Now())}}
		Expect(c.Status().Update(ctx, sc)).To(Succeed())
		r, err := defaultservicecidr.New(defaultservicecidr.Options{Client: c, CIDRs: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16")}})
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Sync(ctx)).To(Succeed())
		sc, err = get(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(ready(sc)).To(Equal("False"))
	})
})
