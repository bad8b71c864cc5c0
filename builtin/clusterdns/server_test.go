package clusterdns_test

import (
	"context"
	"fmt"
	"net"

	"github.com/miekg/dns"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/builtin/clusterdns"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

func headlessSlice(ns, svc string, ports []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Namespace: ns, Name: svc + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: eps, Ports: ports,
	}
}

func endpoint(ip, hostname string, ready bool) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: api.Ptr(ready)}}
	if hostname != "" {
		e.Hostname = api.Ptr(hostname)
	}
	return e
}

var _ = Describe("Cluster DNS server", func() {
	for _, network := range []string{"udp", "tcp"} {
		It("resolves kubernetes.default to the API server's Service over "+network, func() {
			apiIP, err := servicenet.APIServerServiceIP(env.ServiceCIDR)
			Expect(err).NotTo(HaveOccurred())
			for _, name := range []string{"kubernetes.default.svc.cluster.local.", "Kubernetes.Default.SVC.cluster.local."} {
				m := ask(network, addr, name, dns.TypeA)
				Expect(rcode(m)).To(Equal(dns.RcodeSuccess))
				Expect(m.Authoritative).To(BeTrue())
				Expect(m.Answer).To(HaveLen(1))
				Expect(m.Answer[0].Header().Name).To(Equal(name))
				Expect(m.Answer[0].Header().Ttl).To(BeEquivalentTo(clusterdns.DefaultTTL))
				Expect(answers(m)).To(Equal([]string{"A " + apiIP.String()}))
			}
			By("answering SRV for its named port and PTR for its address")
			Expect(answers(ask(network, addr, "_https._tcp.kubernetes.default.svc.cluster.local.", dns.TypeSRV))).
				To(Equal([]string{"SRV 0 100 443 kubernetes.default.svc.cluster.local."}))
			rev, err := dns.ReverseAddr(apiIP.String())
			Expect(err).NotTo(HaveOccurred())
			Expect(answers(ask(network, addr, rev, dns.TypePTR))).To(Equal([]string{"PTR kubernetes.default.svc.cluster.local."}))
		})
	}

	It("serves on the kube-dns Service's cluster IP, port 53", func() {
		dnsIP, err := servicenet.ClusterDNSIP(env.ServiceCIDR)
		Expect(err).NotTo(HaveOccurred())
		svc := &corev1.Service{}
		Expect(c.Get(context.Background(), client.ObjectKey{Namespace: "kube-system", Name: "kube-dns"}, svc)).To(Succeed())
		Expect(svc.Spec.ClusterIP).To(Equal(dnsIP.String()))
		Expect(svc.Labels).To(HaveKeyWithValue("k8s-app", "kube-dns"))
		server := net.JoinHostPort(dnsIP.String(), "53")
		for _, network := range []string{"udp", "tcp"} {
			Eventually(func() []string {
				return answers(ask(network, server, "kube-dns.kube-system.svc.cluster.local.", dns.TypeA))
			}).
				Should(Equal([]string{"A " + dnsIP.String()}), "over %s", network)
		}
	})

	It("answers for ClusterIP Services, and follows their changes", func(ctx SpecContext) {
		ns := namespace(ctx)
		svc := &corev1.Service{
			ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}, {Name: "dns", Port: 5353, Protocol: corev1.ProtocolUDP},
			}},
		}
		Expect(c.Create(ctx, svc)).To(Succeed())
		name := "web." + ns + ".svc.cluster.local."
		Eventually(func() []string { return answers(ask("udp", addr, name, dns.TypeA)) }).Should(Equal([]string{"A " + svc.Spec.ClusterIP}))

		By("SRV per named port, with the target's address in the additional section")
		m := ask("udp", addr, "_http._tcp."+name, dns.TypeSRV)
		Expect(answers(m)).To(Equal([]string{"SRV 0 100 80 " + name}))
		Expect(m.Extra).To(ContainElement(WithTransform(func(rr dns.RR) string { return rr.String() }, ContainSubstring(svc.Spec.ClusterIP))))
		Expect(answers(ask("udp", addr, "_dns._udp."+name, dns.TypeSRV))).To(Equal([]string{"SRV 0 100 5353 " + name}))

		By("NODATA for a type it has not, NXDOMAIN for a name that does not exist, both with the SOA")
		m = ask("udp", addr, name, dns.TypeAAAA)
		Expect(rcode(m)).To(Equal(dns.RcodeSuccess))
		Expect(m.Answer).To(BeEmpty())
		Expect(m.Ns).To(ContainElement(BeAssignableToTypeOf(&dns.SOA{})))
		m = ask("tcp", addr, "nope."+ns+".svc.cluster.local.", dns.TypeA)
		Expect(rcode(m)).To(Equal(dns.RcodeNameError))
		Expect(m.Ns).To(HaveLen(1))
		Expect(m.Ns[0].(*dns.SOA).Minttl).To(BeEquivalentTo(clusterdns.DefaultTTL))
		Expect(rcode(ask("udp", addr, "_nope._tcp."+name, dns.TypeSRV))).To(Equal(dns.RcodeNameError))

		By("turning it into an ExternalName: a CNAME, whose target is resolved upstream")
		Expect(c.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		svc.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "www.example.com"}
		Expect(c.Update(ctx, svc)).To(Succeed())
		Eventually(func() []string { return answers(ask("udp", addr, name, dns.TypeA)) }).
			Should(Equal([]string{"CNAME www.example.com.", "A 192.0.2.53"}))

		By("deleting it")
		Expect(c.Delete(ctx, svc)).To(Succeed())
		Eventually(func() int { return rcode(ask("udp", addr, name, dns.TypeA)) }).Should(Equal(dns.RcodeNameError))
	})

	It("answers for headless Services from their ready endpoints", func(ctx SpecContext) {
		ns := namespace(ctx)
		svc := &corev1.Service{
			ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "db"},
			Spec:       corev1.ServiceSpec{ClusterIP: "None", Ports: []corev1.ServicePort{{Name: "pg", Port: 5432}}},
		}
		Expect(c.Create(ctx, svc)).To(Succeed())
		name := "db." + ns + ".svc.cluster.local."
		Eventually(func() int { return rcode(ask("udp", addr, name, dns.TypeA)) }).Should(Equal(dns.RcodeNameError), "no ready endpoint yet")
		es := headlessSlice(ns, "db",
			[]discoveryv1.EndpointPort{{Name: api.Ptr("pg"), Port: api.Ptr(int32(15432)), Protocol: api.Ptr(corev1.ProtocolTCP)}},
			endpoint("127.10.1.1", "db-0", true), endpoint("127.10.1.2", "", true), endpoint("127.10.1.3", "db-2", false))
		Expect(c.Create(ctx, es)).To(Succeed())
		Eventually(func() []string { return answers(ask("udp", addr, name, dns.TypeA)) }).
			Should(ConsistOf("A 127.10.1.1", "A 127.10.1.2"))

		By("hostname records, dashed names for endpoints without hostname, none for not-ready ones")
		Expect(answers(ask("udp", addr, "db-0."+name, dns.TypeA))).To(Equal([]string{"A 127.10.1.1"}))
		Expect(answers(ask("udp", addr, "127-10-1-2."+name, dns.TypeA))).To(Equal([]string{"A 127.10.1.2"}))
		Expect(rcode(ask("udp", addr, "db-2."+name, dns.TypeA))).To(Equal(dns.RcodeNameError))

		By("SRV per endpoint with the endpoint port, PTR of the endpoints")
		Expect(answers(ask("tcp", addr, "_pg._tcp."+name, dns.TypeSRV))).
			To(ConsistOf("SRV 0 50 15432 db-0."+name, "SRV 0 50 15432 127-10-1-2."+name))
		Expect(answers(ask("udp", addr, "1.1.10.127.in-addr.arpa.", dns.TypePTR))).To(Equal([]string{"PTR db-0." + name}))

		By("publishNotReadyAddresses")
		Expect(c.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		svc.Spec.PublishNotReadyAddresses = true
		Expect(c.Update(ctx, svc)).To(Succeed())
		Eventually(func() []string { return answers(ask("udp", addr, "db-2."+name, dns.TypeA)) }).Should(Equal([]string{"A 127.10.1.3"}))
	})

	It("truncates large UDP answers; TCP gets them whole", func(ctx SpecContext) {
		ns := namespace(ctx)
		svc := &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "many"}, Spec: corev1.ServiceSpec{ClusterIP: "None"}}
		Expect(c.Create(ctx, svc)).To(Succeed())
		var eps []discoveryv1.Endpoint
		for i := range 80 {
			eps = append(eps, endpoint(fmt.Sprintf("127.10.2.%d", i+1), "", true))
		}
		Expect(c.Create(ctx, headlessSlice(ns, "many", nil, eps...))).To(Succeed())
		name := "many." + ns + ".svc.cluster.local."
		Eventually(func() []string { return answers(ask("tcp", addr, name, dns.TypeA)) }).Should(HaveLen(80))
		m := ask("udp", addr, name, dns.TypeA)
		Expect(m.Truncated).To(BeTrue())
		Expect(len(m.Answer)).To(BeNumerically("<", 80))

		By("also for forwarded answers")
		Expect(answers(ask("tcp", addr, "big.example.test.", dns.TypeA))).To(HaveLen(100))
		m = ask("udp", addr, "big.example.test.", dns.TypeA)
		Expect(m.Truncated).To(BeTrue())
	})

	It("keeps serving when an address cannot be opened, and retries it", func() {
		a := freeAddr()
		s := startServer(clusterdns.Options{ExtraAddresses: []string{a, "192.0.2.77:53"}, Upstreams: []string{upstream}})
		Eventually(s.Addresses).Should(ContainElements("udp/"+a, "tcp/"+a))
		Consistently(s.Addresses, "500ms").ShouldNot(ContainElement(ContainSubstring("192.0.2.77")))
		Expect(rcode(ask("tcp", a, "kubernetes.default.svc.cluster.local.", dns.TypeA))).To(Equal(dns.RcodeSuccess))
	})

	It("forwards other names to the upstream servers", func() {
		for _, network := range []string{"udp", "tcp"} {
			m := ask(network, addr, "host.example.test.", dns.TypeA)
			Expect(rcode(m)).To(Equal(dns.RcodeSuccess))
			Expect(m.Authoritative).To(BeFalse())
			Expect(answers(m)).To(Equal([]string{"A 192.0.2.7"}))
			Expect(rcode(ask(network, addr, "missing.example.org.", dns.TypeA))).To(Equal(dns.RcodeNameError))
		}
		Expect(answers(ask("udp", addr, "10-1-2-3.any.pod.cluster.local.", dns.TypeA))).To(Equal([]string{"A 10.1.2.3"}))
		Expect(answers(ask("udp", addr, "dns-version.cluster.local.", dns.TypeTXT))).To(Equal([]string{`TXT "1.1.0"`}))
	})

	It("reads the upstream servers from a resolv.conf, and answers SERVFAIL without any", func() {
		dir := GinkgoT().TempDir()
		a := freeAddr()
		// resolv.conf has no ports: a second upstream on port 53 of a random
		// loopback address (we are root).
		up := randomLoopback()
		startUpstream(net.JoinHostPort(up, "53"))
		rc := writeFile(dir, "resolv.conf", "search example.test\nnameserver "+up+"\noptions ndots:2\n")
		startServer(clusterdns.Options{ExtraAddresses: []string{a}, ResolvConf: rc, Domain: "example.internal"})
		Eventually(func() []string { return answers(ask("udp", a, "host.example.test.", dns.TypeA)) }).Should(Equal([]string{"A 192.0.2.7"}))
		Expect(answers(ask("udp", a, "kubernetes.default.svc.example.internal.", dns.TypeA))).To(HaveLen(1))
		Expect(rcode(ask("udp", a, "kubernetes.default.svc.cluster.local.", dns.TypeA))).To(Equal(dns.RcodeNameError), "forwarded")

		b := freeAddr()
		startServer(clusterdns.Options{ExtraAddresses: []string{b}, ResolvConf: writeFile(dir, "empty.conf", "# nothing\n")})
		Eventually(func() int { return rcode(ask("udp", b, "kubernetes.default.svc.cluster.local.", dns.TypeA)) }).Should(Equal(dns.RcodeSuccess))
		Expect(rcode(ask("udp", b, "host.example.test.", dns.TypeA))).To(Equal(dns.RcodeServerFailure))
	})
})
