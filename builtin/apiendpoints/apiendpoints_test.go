package apiendpoints_test

import (
	"context"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/builtin/apiendpoints"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/storage"
)

var key = client.ObjectKey{Namespace: "default", Name: "kubernetes"}

// serviceIP is the kubernetes Service's IP: the first of the environment's range.
func serviceIP() netip.Addr {
	ip, err := servicenet.APIServerServiceIP(env.ServiceCIDR)
	Expect(err).NotTo(HaveOccurred())
	return ip
}

// apiPort is the test environment's API server port.
func apiPort() int32 {
	u, err := url.Parse(env.URL)
	Expect(err).NotTo(HaveOccurred())
	p, err := strconv.Atoi(u.Port())
	Expect(err).NotTo(HaveOccurred())
	return int32(p)
}

// endpointIPs returns the addresses of the Endpoints and of the EndpointSlice.
func endpointIPs(ctx context.Context) (fromEndpoints, fromSlice []string, err error) {
	ep := &corev1.Endpoints{}
	if err := c.Get(ctx, key, ep); err != nil {
		return nil, nil, err
	}
	for _, s := range ep.Subsets {
		for _, a := range s.Addresses {
			fromEndpoints = append(fromEndpoints, a.IP)
		}
	}
	sl := &discoveryv1.EndpointSlice{}
	if err := c.Get(ctx, key, sl); err != nil {
		return nil, nil, err
	}
	for _, e := range sl.Endpoints {
		fromSlice = append(fromSlice, e.Addresses...)
	}
	return fromEndpoints, fromSlice, nil
}

// eventuallyIPs waits until Endpoints and EndpointSlice both list want.
func eventuallyIPs(ctx context.Context, want ...string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		eps, slice, err := endpointIPs(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(eps).To(Equal(want))
		g.Expect(slice).To(Equal(want))
	}).WithContext(ctx).Should(Succeed())
}

// newReconciler is another API server of the cluster at addr: same store,
// same port, short interval and TTL.
func newReconciler(addr string) *apiendpoints.Reconciler {
	GinkgoHelper()
	r, err := apiendpoints.New(apiendpoints.Options{
		Client: c, Store: env.ControlPlane.Storage(), ServiceIP: serviceIP(),
		Address: netip.MustParseAddr(addr), Port: apiPort(),
		Interval: 100 * time.Millisecond, LeaseTTL: 700 * time.Millisecond,
	})
	Expect(err).NotTo(HaveOccurred())
	return r
}

var _ = Describe("The kubernetes Service", Ordered, func() {
	It("exists from the start with the first IP of the service CIDR and port https 443 to the API server", func(ctx SpecContext) {
		svc := &corev1.Service{}
		Expect(c.Get(ctx, key, svc)).To(Succeed())
		Expect(svc.Labels).To(Equal(map[string]string{"component": "apiserver", "provider": "kubernetes"}))
		Expect(svc.Spec.Selector).To(BeEmpty())
		Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
		Expect(svc.Spec.ClusterIP).To(Equal(serviceIP().String()))
		Expect(svc.Spec.Ports).To(HaveLen(1))
		p := svc.Spec.Ports[0]
		Expect([]any{p.Name, p.Port, p.Protocol, p.TargetPort}).To(Equal([]any{"https", int32(443), corev1.ProtocolTCP, api.FromInt(int(apiPort()))}))

		ep := &corev1.Endpoints{}
		Expect(c.Get(ctx, key, ep)).To(Succeed())
		Expect(ep.Labels).To(HaveKeyWithValue(discoveryv1.LabelSkipMirror, "true"))
		Expect(ep.Subsets).To(Equal([]corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "127.0.0.1"}},
			Ports:     []corev1.EndpointPort{{Name: "https", Port: apiPort(), Protocol: corev1.ProtocolTCP}},
		}}))

		sl := &discoveryv1.EndpointSlice{}
		Expect(c.Get(ctx, key, sl)).To(Succeed())
		Expect(sl.Labels).To(HaveKeyWithValue(discoveryv1.LabelServiceName, "kubernetes"))
		Expect(sl.AddressType).To(Equal(discoveryv1.AddressTypeIPv4))
		Expect(sl.Endpoints).To(Equal([]discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"},
			Conditions: discoveryv1.EndpointConditions{Ready: api.Ptr(true)}}}))
		Expect(sl.Ports).To(Equal([]discoveryv1.EndpointPort{{Name: api.Ptr("https"), Protocol: api.Ptr(corev1.ProtocolTCP), Port: api.Ptr(apiPort())}}))
	})

	It("is left alone by the endpoints and endpointslice controllers (it has no selector)", func(ctx SpecContext) {
		versions := func() ([]string, error) {
			ep, sl := &corev1.Endpoints{}, &discoveryv1.EndpointSlice{}
			if err := c.Get(ctx, key, ep); err != nil {
				return nil, err
			}
			if err := c.Get(ctx, key, sl); err != nil {
				return nil, err
			}
			list := &discoveryv1.EndpointSliceList{}
			if err := c.List(ctx, list, client.InNamespace("default")); err != nil {
				return nil, err
			}
			return []string{ep.ResourceVersion, sl.ResourceVersion, strconv.Itoa(len(list.Items))}, nil
		}
		before, err := versions()
		Expect(err).NotTo(HaveOccurred())
		Expect(before[2]).To(Equal("1"))
		Consistently(versions).WithContext(ctx).WithTimeout(time.Second).Should(Equal(before))
	})

	It("keeps its IP from other Services", func(ctx SpecContext) {
		for i := range 20 {
			s := &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "other-" + strconv.Itoa(i)},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
			Expect(c.Create(ctx, s)).To(Succeed())
			Expect(s.Spec.ClusterIP).NotTo(Equal(serviceIP().String()))
		}
		taken := &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "wants-the-ip"},
			Spec: corev1.ServiceSpec{ClusterIP: serviceIP().String(), Ports: []corev1.ServicePort{{Port: 80}}}}
		err := c.Create(ctx, taken)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("provided IP is already allocated"))
	})

	It("has every live API server as an endpoint; a stopped one leaves within its lease", func(ctx SpecContext) {
		// Two more API servers of the cluster, on other addresses of this machine.
		b := newReconciler("127.0.0.2")
		bctx, stopB := context.WithCancel(ctx)
		bDone := make(chan struct{})
		go func() { defer close(bDone); _ = b.Start(bctx) }()
		cr := newReconciler("127.0.0.3")
		cctx, stopC := context.WithCancel(ctx)
		defer stopC()
		go func() { _ = cr.Start(cctx) }()
		eventuallyIPs(ctx, "127.0.0.1", "127.0.0.2", "127.0.0.3")

		// A clean stop removes the server at once.
		stopB()
		<-bDone
		eventuallyIPs(ctx, "127.0.0.1", "127.0.0.3")

		// A server that dies without a word (it just stops refreshing) leaves
		// when its lease runs out.
		d := newReconciler("127.0.0.4")
		Expect(d.Sync(ctx)).To(Succeed())
		eventuallyIPs(ctx, "127.0.0.1", "127.0.0.3", "127.0.0.4")
		died := time.Now()
		eventuallyIPs(ctx, "127.0.0.1", "127.0.0.3")
		Expect(time.Since(died)).To(BeNumerically("<", 2*time.Second))
		Consistently(func() ([]string, error) {
			eps, _, err := endpointIPs(ctx)
			return eps, err
		}).WithContext(ctx).WithTimeout(500 * time.Millisecond).Should(Equal([]string{"127.0.0.1", "127.0.0.3"}))
	})

	It("has replicas on one address and other ports not undo each other's writes", func(ctx SpecContext) {
		eventuallyIPs(ctx, "127.0.0.1")
		r, err := apiendpoints.New(apiendpoints.Options{
			Client: c, Store: env.ControlPlane.Storage(), ServiceIP: serviceIP(),
			Address: netip.MustParseAddr("127.0.0.1"), Port: apiPort() + 1,
			Interval: 50 * time.Millisecond, LeaseTTL: time.Second,
		})
		Expect(err).NotTo(HaveOccurred())
		rctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Start(rctx) }()
		defer func() { stop(); <-done }()
		Eventually(func() ([]string, error) {
			res, err := env.ControlPlane.Storage().List(ctx, apiendpoints.LeasePrefix, storage.ListOptions{})
			var keys []string
			for _, kv := range res.Items {
				keys = append(keys, strings.TrimPrefix(kv.Key, apiendpoints.LeasePrefix))
			}
			return keys, err
		}).WithContext(ctx).Should(ContainElements("127.0.0.1:"+strconv.Itoa(int(apiPort())), "127.0.0.1:"+strconv.Itoa(int(apiPort())+1)))
		versions := func() ([]string, error) {
			svc, ep, sl := &corev1.Service{}, &corev1.Endpoints{}, &discoveryv1.EndpointSlice{}
			for _, o := range []api.Object{svc, ep, sl} {
				if err := c.Get(ctx, key, o); err != nil {
					return nil, err
				}
			}
			return []string{svc.ResourceVersion, ep.ResourceVersion, sl.ResourceVersion,
				svc.Spec.Ports[0].TargetPort.String(), strconv.Itoa(int(ep.Subsets[0].Ports[0].Port))}, nil
		}
		before, err := versions()
		Expect(err).NotTo(HaveOccurred())
		p := strconv.Itoa(int(apiPort()))
		Expect(before[3:]).To(Equal([]string{p, p}), "a tie goes to the lowest port")
		Consistently(versions).WithContext(ctx).WithTimeout(time.Second).Should(Equal(before))
		eventuallyIPs(ctx, "127.0.0.1")
	})

	It("puts a Service that drifted back, and recreates deleted objects", func(ctx SpecContext) {
		svc := &corev1.Service{}
		Expect(c.Get(ctx, key, svc)).To(Succeed())
		svc.Spec.Ports[0].Port = 8443
		Expect(c.Update(ctx, svc)).To(Succeed())
		Expect(c.Delete(ctx, &discoveryv1.EndpointSlice{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "kubernetes"}})).To(Succeed())
		r := newReconciler("127.0.0.5")
		Expect(r.Sync(ctx)).To(Succeed())
		Expect(c.Get(ctx, key, svc)).To(Succeed())
		Expect(svc.Spec.Ports[0].Port).To(Equal(int32(443)))
		Expect(svc.Spec.ClusterIP).To(Equal(serviceIP().String()))
		_, slice, err := endpointIPs(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(slice).To(ContainElement("127.0.0.5"))
	})

	It("is taken back once another Service that held it is gone; the endpoints stay true meanwhile", func(ctx SpecContext) {
		// Another Service takes the IP while the kubernetes Service is gone
		// (as an old store whose allocator handed the IP out would have it).
		Expect(c.Delete(ctx, &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "kubernetes"}})).To(Succeed())
		squatter := &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "squatter"},
			Spec: corev1.ServiceSpec{ClusterIP: serviceIP().String(), Ports: []corev1.ServicePort{{Port: 80}}}}
		Expect(c.Create(ctx, squatter)).To(Succeed())
		r := newReconciler("127.0.0.6")
		err := r.Sync(ctx)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("provided IP is already allocated"))
		// (The endpoints controller deletes the Endpoints of a Service that is
		// gone, as Kubernetes'; the slice is the reconciler's alone.)
		sl := &discoveryv1.EndpointSlice{}
		Expect(c.Get(ctx, key, sl)).To(Succeed())
		Expect(sl.Endpoints).To(ContainElement(HaveField("Addresses", []string{"127.0.0.6"})))

		Expect(c.Delete(ctx, squatter)).To(Succeed())
		Expect(r.Sync(ctx)).To(Succeed())
		svc := &corev1.Service{}
		Expect(c.Get(ctx, key, svc)).To(Succeed())
		Expect(svc.Spec.ClusterIP).To(Equal(serviceIP().String()))
		Eventually(func(g Gomega) {
			g.Expect(r.Sync(ctx)).To(Succeed())
			eps, _, err := endpointIPs(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(eps).To(ContainElement("127.0.0.6"))
		}).WithContext(ctx).Should(Succeed())
	})
})

var _ = Describe("AdvertiseAddress", func() {
	It("is the bind address when it is specific, and a usable address otherwise", func() {
		Expect(apiendpoints.AdvertiseAddress("127.0.0.1")).To(Equal(netip.MustParseAddr("127.0.0.1")))
		Expect(apiendpoints.AdvertiseAddress("10.1.2.3")).To(Equal(netip.MustParseAddr("10.1.2.3")))
		for _, bind := range []string{"", "0.0.0.0", "::"} {
			a := apiendpoints.AdvertiseAddress(bind)
			Expect(a.IsValid() && !a.IsUnspecified()).To(BeTrue(), bind)
		}
	})
})
