package servicenet_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestServicenet(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "servicenet")
}

var (
	env   *testenv.Environment
	c     *client.Client
	alloc *servicenet.Allocator
	cidr  netip.Prefix
	nsN   atomic.Int32
)

// WireAllocator does in a test what the control plane does in production:
// wrap the services resource of the running API server with an allocator.
func WireAllocator(env *testenv.Environment, opts servicenet.Options) *servicenet.Allocator {
	a, err := servicenet.New(env.ControlPlane.Storage(), opts)
	Expect(err).NotTo(HaveOccurred())
	reg := env.ControlPlane.Registry()
	res := *reg.Get(corev1.GroupVersion().WithResource("services"))
	servicenet.WrapServiceResource(&res, a)
	reg.Add(&res)
	return a
}

var _ = BeforeSuite(func(ctx SpecContext) {
	SetDefaultEventuallyTimeout(10 * time.Second)
	SetDefaultEventuallyPollingInterval(25 * time.Millisecond)
	var err error
	env, err = testenv.Start(context.WithoutCancel(ctx), testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	// A small range, so exhaustion and collisions are reachable.
	cidr = netip.MustParsePrefix(fmt.Sprintf("127.%d.%d.0/26", 96+rand.IntN(16), rand.IntN(256)))
	alloc = WireAllocator(env, servicenet.Options{ServiceCIDR: cidr.String()})
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

func namespace(ctx context.Context) string {
	name := fmt.Sprintf("svcnet-%d", nsN.Add(1))
	Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

func service(ns, name string, mutate ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func nodePortType(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }

func reservationExists(ctx context.Context, key string) bool {
	_, err := env.ControlPlane.Storage().Get(ctx, key)
	return err == nil
}

var _ = Describe("Service allocation", func() {
	It("answers a create with the allocated cluster IP and node port, and stores them", func(ctx SpecContext) {
		ns := namespace(ctx)
		svc := service(ns, "web", nodePortType)
		Expect(c.Create(ctx, svc)).To(Succeed())
		ip := netip.MustParseAddr(svc.Spec.ClusterIP)
		Expect(cidr.Contains(ip)).To(BeTrue(), "clusterIP %s in %s", ip, cidr)
		Expect(svc.Spec.ClusterIPs).To(Equal([]string{svc.Spec.ClusterIP}))
		Expect(svc.Spec.Ports[0].NodePort).To(BeNumerically(">=", 30000))
		Expect(svc.Spec.Ports[0].NodePort).To(BeNumerically("<=", 32767))

		var got corev1.Service
		Expect(c.Get(ctx, client.ObjectKeyFromObject(svc), &got)).To(Succeed())
		Expect(got.Spec.ClusterIP).To(Equal(svc.Spec.ClusterIP))
		Expect(got.Spec.Ports[0].NodePort).To(Equal(svc.Spec.Ports[0].NodePort))
		Expect(reservationExists(ctx, servicenet.IPReservationPrefix+ip.String())).To(BeTrue())
		Expect(reservationExists(ctx, fmt.Sprintf("%s%d", servicenet.NodePortReservationPrefix, svc.Spec.Ports[0].NodePort))).To(BeTrue())

		By("keeping the allocated values when an update omits them")
		next := service(ns, "web", nodePortType)
		next.ResourceVersion = got.ResourceVersion
		next.Spec.Selector = map[string]string{"app": "web"}
		Expect(c.Update(ctx, next)).To(Succeed())
		Expect(next.Spec.ClusterIP).To(Equal(svc.Spec.ClusterIP))
		Expect(next.Spec.Ports[0].NodePort).To(Equal(svc.Spec.Ports[0].NodePort))
	})

	It("gives headless and ExternalName services no cluster IP", func(ctx SpecContext) {
		ns := namespace(ctx)
		headless := service(ns, "headless", func(s *corev1.Service) { s.Spec.ClusterIP = "None" })
		Expect(c.Create(ctx, headless)).To(Succeed())
		Expect(headless.Spec.ClusterIPs).To(Equal([]string{"None"}))
		ext := service(ns, "ext", func(s *corev1.Service) {
			s.Spec.Type, s.Spec.ExternalName, s.Spec.Ports = corev1.ServiceTypeExternalName, "example.com", nil
		})
		Expect(c.Create(ctx, ext)).To(Succeed())
		Expect(ext.Spec.ClusterIP).To(BeEmpty())
	})

	It("refuses requested values that are taken, with Kubernetes' messages", func(ctx SpecContext) {
		ns := namespace(ctx)
		first := service(ns, "first", nodePortType)
		Expect(c.Create(ctx, first)).To(Succeed())
		ip, np := first.Spec.ClusterIP, first.Spec.Ports[0].NodePort

		err := c.Create(ctx, service(ns, "same-ip", func(s *corev1.Service) { s.Spec.ClusterIP = ip }))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(Equal(fmt.Sprintf(
			`Service "same-ip" is invalid: spec.clusterIPs: Invalid value: []string{%q}: failed to allocate IP %s: provided IP is already allocated`, ip, ip)))

		err = c.Create(ctx, service(ns, "same-port", nodePortType, func(s *corev1.Service) { s.Spec.Ports[0].NodePort = np }))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(Equal(fmt.Sprintf(
			`Service "same-port" is invalid: spec.ports[0].nodePort: Invalid value: %d: provided port is already allocated`, np)))

		err = c.Create(ctx, service(ns, "outside", func(s *corev1.Service) { s.Spec.ClusterIP = "10.96.0.10" }))
		Expect(err).To(MatchError(ContainSubstring("provided IP is not in the valid range. The range of valid IPs is " + cidr.String())))
	})

	It("never gives two concurrent creates the same IP", func(ctx SpecContext) {
		ns := namespace(ctx)
		const n = 16
		ips := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				defer GinkgoRecover()
				s := service(ns, fmt.Sprintf("c%d", i))
				Expect(c.Create(ctx, s)).To(Succeed())
				ips[i] = s.Spec.ClusterIP
			})
		}
		wg.Wait()
		seen := map[string]int{}
		for i, ip := range ips {
			Expect(seen).NotTo(HaveKey(ip), "services c%d and c%d share %s", i, seen[ip], ip)
			seen[ip] = i
		}
		for i := range n {
			Expect(c.Delete(ctx, service(ns, fmt.Sprintf("c%d", i)))).To(Succeed())
		}
	})

	It("frees the IP and node port when the service is deleted", func(ctx SpecContext) {
		ns := namespace(ctx)
		svc := service(ns, "temp", nodePortType)
		Expect(c.Create(ctx, svc)).To(Succeed())
		ip, np := svc.Spec.ClusterIP, svc.Spec.Ports[0].NodePort
		Expect(c.Delete(ctx, svc)).To(Succeed())
		Expect(reservationExists(ctx, servicenet.IPReservationPrefix+ip)).To(BeFalse())

		again := service(ns, "again", nodePortType, func(s *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.Ports[0].NodePort = ip, np
		})
		Expect(c.Create(ctx, again)).To(Succeed())
		Expect(again.Spec.ClusterIP).To(Equal(ip))
		Expect(again.Spec.Ports[0].NodePort).To(Equal(np))
	})

	It("repairs reservations lost or leaked behind the API server's back", func(ctx SpecContext) {
		ns := namespace(ctx)
		svc := service(ns, "repaired")
		Expect(c.Create(ctx, svc)).To(Succeed())
		key := servicenet.IPReservationPrefix + svc.Spec.ClusterIP
		store := env.ControlPlane.Storage()
		_, _, err := store.Delete(ctx, key, 0)
		Expect(err).NotTo(HaveOccurred())
		leak := servicenet.IPReservationPrefix + "127.0.0.99"
		_, err = store.Create(ctx, leak, []byte(`{"namespace":"x","name":"gone","uid":"nope"}`))
		Expect(err).NotTo(HaveOccurred())

		r := servicenet.NewRepairer(alloc, 0)
		res, err := r.RunOnce(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Reserved).To(ContainElement(key))
		Expect(res.Suspected).To(ContainElement(leak))
		res, err = r.RunOnce(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Released).To(ContainElement(leak))
		Expect(reservationExists(ctx, key)).To(BeTrue())
		Expect(reservationExists(ctx, leak)).To(BeFalse())
	})
})
