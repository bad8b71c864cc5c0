package endpointslicemirroring_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/builtin/controllers/endpointslicemirroring"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

func slicesOf(ctx SpecContext, name string) func(Gomega) []discoveryv1.EndpointSlice {
	return func(g Gomega) []discoveryv1.EndpointSlice {
		l := &discoveryv1.EndpointSliceList{}
		g.Expect(c.List(ctx, l, client.InNamespace("default"), client.MatchingLabels{discoveryv1.LabelServiceName: name})).To(Succeed())
		return l.Items
	}
}

func service(ctx SpecContext, name string, selector map[string]string) {
	svc := &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{{Name: "example", Port: 80}}}}
	Expect(c.Create(ctx, svc)).To(Succeed())
}

func endpoints(name string, labels map[string]string, ips ...string) *corev1.Endpoints {
	var addrs []corev1.EndpointAddress
	for _, ip := range ips {
		addrs = append(addrs, corev1.EndpointAddress{IP: ip})
	}
	return &corev1.Endpoints{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name, Labels: labels},
		Subsets: []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Port: 80}}, Addresses: addrs,
			NotReadyAddresses: []corev1.EndpointAddress{{IP: "fd00::1", Hostname: "h"}}}}}
}

func addresses(s discoveryv1.EndpointSlice) []string {
	var out []string
	for _, e := range s.Endpoints {
		out = append(out, e.Addresses...)
	}
	return out
}

var _ = Describe("mirroring custom Endpoints", func() {
	It("mirrors the Endpoints of a selector-less Service through create, update and delete", func(ctx SpecContext) {
		service(ctx, "custom", nil)
		eps := endpoints("custom", map[string]string{"team": "a"}, "10.1.2.3")
		Expect(c.Create(ctx, eps)).To(Succeed())
		Eventually(slicesOf(ctx, "custom")).Should(ConsistOf(
			And(HaveField("AddressType", discoveryv1.AddressTypeIPv4), WithTransform(addresses, Equal([]string{"10.1.2.3"})),
				HaveField("Labels", And(HaveKeyWithValue("team", "a"), HaveKeyWithValue(discoveryv1.LabelManagedBy, endpointslicemirroring.ControllerName))),
				HaveField("OwnerReferences", ConsistOf(HaveField("Kind", "Endpoints")))),
			And(HaveField("AddressType", discoveryv1.AddressTypeIPv6), WithTransform(addresses, Equal([]string{"fd00::1"})),
				HaveField("Endpoints", ConsistOf(HaveField("Conditions.Ready", HaveValue(BeFalse()))))),
		))

		eps.Subsets[0].Addresses = []corev1.EndpointAddress{{IP: "10.2.3.4"}}
		eps.Subsets[0].NotReadyAddresses = nil
		Expect(c.Update(ctx, eps)).To(Succeed())
		Eventually(slicesOf(ctx, "custom")).Should(ConsistOf(WithTransform(addresses, Equal([]string{"10.2.3.4"}))))

		Expect(c.Delete(ctx, eps)).To(Succeed())
		Eventually(slicesOf(ctx, "custom")).Should(BeEmpty())
	})

	It("leaves Endpoints alone that skip mirroring or belong to a Service with a selector", func(ctx SpecContext) {
		service(ctx, "skipped", nil)
		Expect(c.Create(ctx, endpoints("skipped", map[string]string{discoveryv1.LabelSkipMirror: "true"}, "10.0.0.1"))).To(Succeed())
		service(ctx, "selected", map[string]string{"app": "x"})
		Expect(c.Create(ctx, endpoints("selected", nil, "10.0.0.2"))).To(Succeed())
		service(ctx, "marker", nil)
		Expect(c.Create(ctx, endpoints("marker", nil, "10.0.0.3"))).To(Succeed())
		// Once the last Endpoints is mirrored the controller is running; the
		// others stay unmirrored.
		Eventually(slicesOf(ctx, "marker")).ShouldNot(BeEmpty())
		Consistently(slicesOf(ctx, "skipped")).Should(BeEmpty())
		Expect(slicesOf(ctx, "selected")(Default)).To(BeEmpty())
	})
})
