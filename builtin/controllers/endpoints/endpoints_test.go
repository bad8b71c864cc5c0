package endpoints_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/endpoints"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

func ips(addrs []corev1.EndpointAddress) []string {
	var out []string
	for _, a := range addrs {
		out = append(out, a.IP)
	}
	return out
}

var _ = Describe("Endpoints controller", func() {
	It("keeps subsets of ready and not-ready addresses grouped by port set", func(ctx SpecContext) {
		ns := namespace(ctx)
		svc := &corev1.Service{
			ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "web", Labels: map[string]string{"team": "a"}},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": "web"},
				Ports: []corev1.ServicePort{
					{Name: "http", Port: 80, TargetPort: api.FromInt(8080)},
					{Name: "metrics", Port: 9000, TargetPort: api.FromString("metrics")},
				},
			},
		}
		Expect(c.Create(ctx, svc)).To(Succeed())
		pod(ctx, ns, "web-0", "web", "10.0.0.2", true, true)
		pod(ctx, ns, "web-1", "web", "10.0.0.1", true, true)
		pod(ctx, ns, "web-2", "web", "10.0.0.3", false, true)
		pod(ctx, ns, "web-3", "web", "10.0.0.4", true, false) // no metrics port

		ep := &corev1.Endpoints{}
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, ep)).To(Succeed())
			g.Expect(ep.Labels).To(HaveKeyWithValue(endpoints.LabelManagedBy, endpoints.ControllerName))
			g.Expect(ep.Labels).To(HaveKeyWithValue("team", "a"))
			g.Expect(ep.Subsets).To(HaveLen(2))
			for _, ss := range ep.Subsets {
				switch len(ss.Ports) {
				case 2:
					g.Expect(ips(ss.Addresses)).To(Equal([]string{"10.0.0.1", "10.0.0.2"}))
					g.Expect(ips(ss.NotReadyAddresses)).To(Equal([]string{"10.0.0.3"}))
					g.Expect(ss.Ports).To(ConsistOf(
						corev1.EndpointPort{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP},
						corev1.EndpointPort{Name: "metrics", Port: 9100, Protocol: corev1.ProtocolTCP}))
					g.Expect(ss.Addresses[0].TargetRef.Name).To(Equal("web-1"))
					g.Expect(*ss.Addresses[0].NodeName).To(Equal("n1"))
				case 1:
					g.Expect(ips(ss.Addresses)).To(Equal([]string{"10.0.0.4"}))
				default:
					g.Expect(ss.Ports).To(HaveLen(2), "unexpected subset")
				}
			}
		}).Should(Succeed())

		// Deleting the Service deletes its Endpoints.
		Expect(c.Delete(ctx, svc)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &corev1.Endpoints{}))
		}).Should(BeTrue())
	})

	It("publishes not-ready addresses, serves headless services without ports and skips selector-less ones", func(ctx SpecContext) {
		ns := namespace(ctx)
		Expect(c.Create(ctx, &corev1.Service{
			ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "pub"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "pub"}, PublishNotReadyAddresses: true,
				Ports: []corev1.ServicePort{{Port: 80}}},
		})).To(Succeed())
		Expect(c.Create(ctx, &corev1.Service{
			ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "hl"},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "pub"}, ClusterIP: "None"},
		})).To(Succeed())
		Expect(c.Create(ctx, &corev1.Service{
			ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "manual"},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
		})).To(Succeed())
		pod(ctx, ns, "pub-0", "pub", "10.1.0.1", false, false)

		Eventually(func(g Gomega) {
			ep := &corev1.Endpoints{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pub"}, ep)).To(Succeed())
			g.Expect(ep.Subsets).To(HaveLen(1))
			g.Expect(ips(ep.Subsets[0].Addresses)).To(Equal([]string{"10.1.0.1"}))
			g.Expect(ep.Subsets[0].Ports).To(Equal([]corev1.EndpointPort{{Port: 80, Protocol: corev1.ProtocolTCP}}))

			hl := &corev1.Endpoints{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hl"}, hl)).To(Succeed())
			g.Expect(hl.Labels).To(HaveKey(endpoints.LabelHeadless))
			g.Expect(hl.Subsets).To(HaveLen(1))
			g.Expect(hl.Subsets[0].Ports).To(BeEmpty())
			g.Expect(ips(hl.Subsets[0].NotReadyAddresses)).To(Equal([]string{"10.1.0.1"}))
		}).Should(Succeed())
		Consistently(func() bool {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "manual"}, &corev1.Endpoints{}))
		}, "300ms").Should(BeTrue())
	})

	It("leaves custom Endpoints that have no Service alone", func(ctx SpecContext) {
		ns := namespace(ctx)
		ep := &corev1.Endpoints{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "custom", Labels: map[string]string{"test-endpoint-static": "true"}},
			Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.9"}}, Ports: []corev1.EndpointPort{{Port: 80}}}}}
		Expect(c.Create(ctx, ep)).To(Succeed())
		Consistently(func() error {
			return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "custom"}, &corev1.Endpoints{})
		}, "500ms").Should(Succeed())
	})
})
