package endpointslice_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/builtin/controllers/endpointslice"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// byPod maps pod name → endpoint over all slices.
func byPod(items []discoveryv1.EndpointSlice) map[string]discoveryv1.Endpoint {
	out := map[string]discoveryv1.Endpoint{}
	for _, s := range items {
		for _, ep := range s.Endpoints {
			out[ep.TargetRef.Name] = ep
		}
	}
	return out
}

func portMap(ports []discoveryv1.EndpointPort) map[string]int32 {
	out := map[string]int32{}
	for _, p := range ports {
		out[*p.Name] = *p.Port
	}
	return out
}

var _ = Describe("EndpointSlice controller", func() {
	It("lists ready pods with resolved ports, labels, owner and zone, and flips readiness", func(ctx SpecContext) {
		ns := namespace(ctx)
		node := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: ns + "-node", Labels: map[string]string{endpointslice.LabelZone: "zone-a"}}}
		Expect(c.Create(ctx, node)).To(Succeed())
		svc := service(ctx, ns, "web", "web")
		for i := range 3 {
			pod(ctx, ns, fmt.Sprintf("web-%d", i), "web", node.Name, fmt.Sprintf("10.1.0.%d", i+1), true, false)
		}
		pod(ctx, ns, "other", "other", node.Name, "10.1.0.9", true, false) // not selected

		Eventually(func(g Gomega) {
			items := slicesOf(ctx, ns, "web")
			g.Expect(items).To(HaveLen(1))
			s := items[0]
			g.Expect(s.Endpoints).To(HaveLen(3))
			g.Expect(s.AddressType).To(Equal(discoveryv1.AddressTypeIPv4))
			g.Expect(portMap(s.Ports)).To(Equal(map[string]int32{"http": 8080, "metrics": 9100}))
			for _, ep := range s.Endpoints {
				g.Expect(*ep.Conditions.Ready).To(BeTrue())
				g.Expect(*ep.Conditions.Serving).To(BeTrue())
				g.Expect(*ep.Conditions.Terminating).To(BeFalse())
				g.Expect(*ep.NodeName).To(Equal(node.Name))
				g.Expect(ep.Zone).NotTo(BeNil())
				g.Expect(*ep.Zone).To(Equal("zone-a"))
				g.Expect(ep.TargetRef.Kind).To(Equal("Pod"))
			}
			g.Expect(s.Labels).To(HaveKeyWithValue(discoveryv1.LabelManagedBy, endpointslice.ControllerName))
			g.Expect(s.Labels).To(HaveKeyWithValue("team", "a"))
			g.Expect(s.Labels).NotTo(HaveKey(endpointslice.LabelHeadless))
			g.Expect(s.Name).To(HavePrefix("web-"))
			g.Expect(s.OwnerReferences).To(HaveLen(1))
			g.Expect(s.OwnerReferences[0].UID).To(Equal(svc.UID))
			g.Expect(*s.OwnerReferences[0].Controller).To(BeTrue())
		}).Should(Succeed())

		// A no-op pod change writes nothing.
		before := slicesOf(ctx, ns, "web")[0].ResourceVersion
		p := &corev1.Pod{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-0"}, p)).To(Succeed())
		Expect(c.Patch(ctx, p, client.RawPatch(client.MergePatchType, []byte(`{"metadata":{"annotations":{"x":"y"}}}`)))).To(Succeed())
		Consistently(func() string { return slicesOf(ctx, ns, "web")[0].ResourceVersion }, "500ms").Should(Equal(before))

		// Readiness flips.
		setPodStatus(ctx, p, "10.1.0.1", false)
		Eventually(func(g Gomega) {
			ep := byPod(slicesOf(ctx, ns, "web"))["web-0"]
			g.Expect(*ep.Conditions.Ready).To(BeFalse())
			g.Expect(*ep.Conditions.Serving).To(BeFalse())
		}).Should(Succeed())
	})

	It("groups pods lacking a named port into another slice", func(ctx SpecContext) {
		ns := namespace(ctx)
		service(ctx, ns, "api", "api")
		pod(ctx, ns, "api-0", "api", "", "10.2.0.1", true, false)
		pod(ctx, ns, "api-1", "api", "", "10.2.0.2", true, true) // no "metrics" port
		Eventually(func(g Gomega) {
			items := slicesOf(ctx, ns, "api")
			g.Expect(items).To(HaveLen(2))
			got := map[int]string{}
			for _, s := range items {
				g.Expect(s.Endpoints).To(HaveLen(1))
				got[len(s.Ports)] = s.Endpoints[0].TargetRef.Name
			}
			g.Expect(got).To(Equal(map[int]string{2: "api-0", 1: "api-1"}))
		}).Should(Succeed())
	})

	It("splits 150 pods into slices of at most 100", func(ctx SpecContext) {
		ns := namespace(ctx)
		service(ctx, ns, "big", "big")
		for i := range 150 {
			pod(ctx, ns, fmt.Sprintf("big-%d", i), "big", "", fmt.Sprintf("10.3.%d.%d", i/200, i%200+1), true, false)
		}
		Eventually(func(g Gomega) {
			items := slicesOf(ctx, ns, "big")
			g.Expect(items).To(HaveLen(2))
			total := 0
			for _, s := range items {
				g.Expect(len(s.Endpoints)).To(BeNumerically("<=", 100))
				total += len(s.Endpoints)
			}
			g.Expect(total).To(Equal(150))
			g.Expect(byPod(items)).To(HaveLen(150))
		}, "20s").Should(Succeed())
	})

	It("publishes not-ready addresses as ready when asked", func(ctx SpecContext) {
		ns := namespace(ctx)
		service(ctx, ns, "pub", "pub", func(s *corev1.Service) { s.Spec.PublishNotReadyAddresses = true })
		pod(ctx, ns, "pub-0", "pub", "", "10.4.0.1", false, false)
		Eventually(func(g Gomega) {
			ep, ok := byPod(slicesOf(ctx, ns, "pub"))["pub-0"]
			g.Expect(ok).To(BeTrue())
			g.Expect(*ep.Conditions.Ready).To(BeTrue())
			g.Expect(*ep.Conditions.Serving).To(BeTrue())
		}).Should(Succeed())
	})

	It("gives headless services slices and a placeholder when there are no endpoints", func(ctx SpecContext) {
		ns := namespace(ctx)
		service(ctx, ns, "db", "db", func(s *corev1.Service) { s.Spec.ClusterIP = "None" })
		Eventually(func(g Gomega) {
			items := slicesOf(ctx, ns, "db")
			g.Expect(items).To(HaveLen(1))
			g.Expect(items[0].Endpoints).To(BeEmpty())
			g.Expect(items[0].Labels).To(HaveKey(endpointslice.LabelHeadless))
		}).Should(Succeed())
		p := &corev1.Pod{
			ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "db-0", Labels: map[string]string{"app": "db"}},
			Spec: corev1.PodSpec{Hostname: "db-0", Subdomain: "db", Containers: []corev1.Container{{
				Name: "c", Image: "busybox", Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9100}},
			}}},
		}
		Expect(c.Create(ctx, p)).To(Succeed())
		setPodStatus(ctx, p, "fd00::5", true)
		Eventually(func(g Gomega) {
			items := slicesOf(ctx, ns, "db")
			g.Expect(items).To(HaveLen(1))
			g.Expect(items[0].AddressType).To(Equal(discoveryv1.AddressTypeIPv6))
			g.Expect(items[0].Endpoints).To(HaveLen(1))
			g.Expect(items[0].Endpoints[0].Addresses).To(Equal([]string{"fd00::5"}))
			g.Expect(*items[0].Endpoints[0].Hostname).To(Equal("db-0"))
		}).Should(Succeed())
	})

	It("leaves services without selector alone and removes slices of deleted services", func(ctx SpecContext) {
		ns := namespace(ctx)
		service(ctx, ns, "manual", "", func(s *corev1.Service) { s.Spec.Selector = nil })
		svc := service(ctx, ns, "gone", "gone")
		pod(ctx, ns, "gone-0", "gone", "", "10.5.0.1", true, false)
		Eventually(func() int { return endpointCount(ctx, ns, "gone") }).Should(Equal(1))
		Expect(slicesOf(ctx, ns, "manual")).To(BeEmpty())

		Expect(c.Delete(ctx, svc)).To(Succeed())
		Eventually(func() []discoveryv1.EndpointSlice { return slicesOf(ctx, ns, "gone") }).Should(BeEmpty())
	})

	It("marks endpoints of terminating pods", func(ctx SpecContext) {
		ns := namespace(ctx)
		service(ctx, ns, "term", "term")
		p := pod(ctx, ns, "term-0", "term", "", "10.6.0.1", true, false)
		Eventually(func() int { return endpointCount(ctx, ns, "term") }).Should(Equal(1))
		Expect(c.Patch(ctx, p, client.RawPatch(client.MergePatchType, []byte(`{"metadata":{"finalizers":["test/hold"]}}`)))).To(Succeed())
		Expect(c.Delete(ctx, p)).To(Succeed())
		Eventually(func(g Gomega) {
			ep := byPod(slicesOf(ctx, ns, "term"))["term-0"]
			g.Expect(ep.Conditions.Terminating).NotTo(BeNil())
			g.Expect(*ep.Conditions.Terminating).To(BeTrue())
			g.Expect(*ep.Conditions.Ready).To(BeFalse())
			g.Expect(*ep.Conditions.Serving).To(BeTrue())
		}).Should(Succeed())
		Expect(c.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
		Expect(c.Patch(ctx, p, client.RawPatch(client.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		Eventually(func() int { return endpointCount(ctx, ns, "term") }).Should(Equal(0))
		Expect(strings.HasPrefix(slicesOf(ctx, ns, "term")[0].Name, "term-")).To(BeTrue())
	})
})
