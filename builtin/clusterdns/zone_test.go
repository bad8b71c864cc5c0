package clusterdns

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/framework/api"
)

func service(ns, name, clusterIP string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: clusterIP, Ports: ports},
	}
}

func slice(ns, svc string, ports []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Namespace: ns, Name: svc + "-x", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: eps, Ports: ports,
	}
}

func ep(ip, hostname string, ready *bool) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
	if hostname != "" {
		e.Hostname = api.Ptr(hostname)
	}
	return e
}

// testZone is a small cluster: a ClusterIP Service with a named and an unnamed
// port, a headless Service with a pet, an unnamed and a not-ready endpoint, a
// headless Service publishing not-ready addresses, an ExternalName, an IPv6
// Service and the DNS Service.
func testZone() *zone {
	web := service("default", "web", "10.96.0.20",
		corev1.ServicePort{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP},
		corev1.ServicePort{Port: 81, Protocol: corev1.ProtocolTCP})
	db := service("data", "db", "None", corev1.ServicePort{Name: "pg", Port: 5432})
	pending := service("data", "pending", "None")
	pending.Spec.PublishNotReadyAddresses = true
	ext := &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "ext"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "www.example.com"}}
	v6 := service("default", "six", "fd00::20", corev1.ServicePort{Name: "http", Port: 80})
	kubeDNS := service("kube-system", "kube-dns", "10.96.0.10",
		corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP})
	pgPort := []discoveryv1.EndpointPort{{Name: api.Ptr("pg"), Port: api.Ptr(int32(15432)), Protocol: api.Ptr(corev1.ProtocolTCP)}}
	return buildZone(zoneInput{
		Domain: "Cluster.Local", TTL: 30, Serial: 7, DNSService: "kube-system/kube-dns",
		Services: []*corev1.Service{web, db, pending, ext, v6, kubeDNS, service("default", "unallocated", "")},
		Slices: []*discoveryv1.EndpointSlice{
			slice("data", "db", pgPort, ep("10.1.0.1", "pet-0", api.Ptr(true)), ep("10.1.0.2", "", nil), ep("10.1.0.3", "sick", api.Ptr(false))),
			slice("data", "pending", nil, ep("10.1.0.9", "", api.Ptr(false))),
			slice("default", "web", nil, ep("10.1.0.50", "", nil)),
		},
	})
}

// rrStrings renders records without TTL differences hidden, sorted.
func rrStrings(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = strings.ReplaceAll(rr.String(), "\t", " ")
	}
	slices.Sort(out)
	return out
}

func TestLookup(t *testing.T) {
	t.Parallel()
	z := testZone()
	soa := []string{"cluster.local. 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 7 7200 1800 86400 30"}
	tests := []struct {
		name   string
		qname  string
		qtype  uint16
		rcode  int
		answer []string
		ns     []string
		extra  []string
		fwd    bool
		chase  string
	}{
		{name: "cluster IP", qname: "web.default.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"web.default.svc.cluster.local. 30 IN A 10.96.0.20"}},
		{name: "case-insensitive, keeps the question's spelling", qname: "WEB.Default.svc.CLUSTER.local.", qtype: dns.TypeA,
			answer: []string{"WEB.Default.svc.CLUSTER.local. 30 IN A 10.96.0.20"}},
		{name: "AAAA of an IPv4 service is NODATA", qname: "web.default.svc.cluster.local.", qtype: dns.TypeAAAA, ns: soa},
		{name: "IPv6 service", qname: "six.default.svc.cluster.local.", qtype: dns.TypeAAAA,
			answer: []string{"six.default.svc.cluster.local. 30 IN AAAA fd00::20"}},
		{name: "SRV of a named port, unnamed ports have none", qname: "_http._tcp.web.default.svc.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{"_http._tcp.web.default.svc.cluster.local. 30 IN SRV 0 100 80 web.default.svc.cluster.local."},
			extra:  []string{"web.default.svc.cluster.local. 30 IN A 10.96.0.20"}},
		{name: "no endpoint names under a ClusterIP service", qname: "10-1-0-50.web.default.svc.cluster.local.", qtype: dns.TypeA,
			rcode: dns.RcodeNameError, ns: soa},
		{name: "headless: ready endpoints only", qname: "db.data.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"db.data.svc.cluster.local. 30 IN A 10.1.0.1", "db.data.svc.cluster.local. 30 IN A 10.1.0.2"}},
		{name: "headless: endpoint hostname", qname: "pet-0.db.data.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"pet-0.db.data.svc.cluster.local. 30 IN A 10.1.0.1"}},
		{name: "headless: endpoint without hostname by dashed address", qname: "10-1-0-2.db.data.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"10-1-0-2.db.data.svc.cluster.local. 30 IN A 10.1.0.2"}},
		{name: "headless: not-ready endpoint has no name", qname: "sick.db.data.svc.cluster.local.", qtype: dns.TypeA,
			rcode: dns.RcodeNameError, ns: soa},
		{name: "headless SRV: one per endpoint with the endpoint port", qname: "_pg._tcp.db.data.svc.cluster.local.", qtype: dns.TypeSRV,
			answer: []string{
				"_pg._tcp.db.data.svc.cluster.local. 30 IN SRV 0 50 15432 10-1-0-2.db.data.svc.cluster.local.",
				"_pg._tcp.db.data.svc.cluster.local. 30 IN SRV 0 50 15432 pet-0.db.data.svc.cluster.local.",
			},
			extra: []string{"10-1-0-2.db.data.svc.cluster.local. 30 IN A 10.1.0.2", "pet-0.db.data.svc.cluster.local. 30 IN A 10.1.0.1"}},
		{name: "publishNotReadyAddresses", qname: "pending.data.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"pending.data.svc.cluster.local. 30 IN A 10.1.0.9"}},
		{name: "ExternalName is a CNAME, chased upstream", qname: "ext.default.svc.cluster.local.", qtype: dns.TypeA,
			answer: []string{"ext.default.svc.cluster.local. 30 IN CNAME www.example.com."}, chase: "www.example.com."},
		{name: "ExternalName asked for CNAME", qname: "ext.default.svc.cluster.local.", qtype: dns.TypeCNAME,
			answer: []string{"ext.default.svc.cluster.local. 30 IN CNAME www.example.com."}},
		{name: "unknown service is NXDOMAIN", qname: "nope.default.svc.cluster.local.", qtype: dns.TypeA,
			rcode: dns.RcodeNameError, ns: soa},
		{name: "unallocated service is NXDOMAIN", qname: "unallocated.default.svc.cluster.local.", qtype: dns.TypeA,
			rcode: dns.RcodeNameError, ns: soa},
		{name: "namespace name is NODATA", qname: "default.svc.cluster.local.", qtype: dns.TypeA, ns: soa},
		{name: "svc is NODATA", qname: "svc.cluster.local.", qtype: dns.TypeA, ns: soa},
		{name: "unknown namespace is NXDOMAIN", qname: "nons.svc.cluster.local.", qtype: dns.TypeA,
			rcode: dns.RcodeNameError, ns: soa},
		{name: "PTR of a cluster IP", qname: "20.0.96.10.in-addr.arpa.", qtype: dns.TypePTR,
			answer: []string{"20.0.96.10.in-addr.arpa. 30 IN PTR web.default.svc.cluster.local."}},
		{name: "PTR of a headless endpoint", qname: "1.0.1.10.in-addr.arpa.", qtype: dns.TypePTR,
			answer: []string{"1.0.1.10.in-addr.arpa. 30 IN PTR pet-0.db.data.svc.cluster.local."}},
		{name: "PTR of an IPv6 cluster IP", qname: "0.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.", qtype: dns.TypePTR,
			answer: []string{"0.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa. 30 IN PTR six.default.svc.cluster.local."}},
		{name: "PTR of another address is forwarded", qname: "8.8.8.8.in-addr.arpa.", qtype: dns.TypePTR, fwd: true},
		{name: "other names are forwarded", qname: "example.com.", qtype: dns.TypeA, fwd: true},
		{name: "pod record", qname: "10-1-2-3.default.pod.cluster.local.", qtype: dns.TypeA,
			answer: []string{"10-1-2-3.default.pod.cluster.local. 30 IN A 10.1.2.3"}},
		{name: "pod record of a bad address", qname: "10-1-2-x.default.pod.cluster.local.", qtype: dns.TypeA,
			rcode: dns.RcodeNameError, ns: soa},
		{name: "dns-version", qname: "dns-version.cluster.local.", qtype: dns.TypeTXT,
			answer: []string{`dns-version.cluster.local. 30 IN TXT "1.1.0"`}},
		{name: "apex SOA", qname: "cluster.local.", qtype: dns.TypeSOA, answer: soa},
		{name: "apex NS with the DNS service as glue", qname: "cluster.local.", qtype: dns.TypeNS,
			answer: []string{"cluster.local. 30 IN NS ns.dns.cluster.local."},
			extra:  []string{"ns.dns.cluster.local. 30 IN A 10.96.0.10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := z.lookup(dns.Question{Name: tt.qname, Qtype: tt.qtype, Qclass: dns.ClassINET})
			if res.Forward != tt.fwd {
				t.Fatalf("forward %v, want %v", res.Forward, tt.fwd)
			}
			if tt.fwd {
				return
			}
			if res.Rcode != tt.rcode || !res.Authoritative {
				t.Errorf("rcode %s (authoritative %v), want %s", dns.RcodeToString[res.Rcode], res.Authoritative, dns.RcodeToString[tt.rcode])
			}
			for _, c := range []struct {
				what      string
				got, want []string
			}{{"answer", rrStrings(res.Answer), tt.answer}, {"authority", rrStrings(res.Ns), tt.ns}, {"additional", rrStrings(res.Extra), tt.extra}} {
				if !slices.Equal(c.got, c.want) {
					t.Errorf("%s:\n got %q\nwant %q", c.what, c.got, c.want)
				}
			}
			if res.Chase != tt.chase {
				t.Errorf("chase %q, want %q", res.Chase, tt.chase)
			}
		})
	}
}

func TestDashed(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"10.1.2.3", "fd00::1"} {
		ip := mustAddr(t, s)
		d := dashed(ip)
		back, ok := undash(d)
		if !ok || back != ip {
			t.Errorf("%s → %q → %s %v", s, d, back, ok)
		}
	}
	if d := dashed(mustAddr(t, "10.1.2.3")); d != "10-1-2-3" {
		t.Errorf("dashed %q", d)
	}
}

func mustAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	ip, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return ip
}
