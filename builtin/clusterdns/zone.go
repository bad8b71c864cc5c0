package clusterdns

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/miekg/dns"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
)

// clusterIPNone is the cluster IP of a headless Service.
const clusterIPNone = "None"

// SchemaVersion is the version of the Kubernetes DNS schema served, in the
// dns-version.<domain> TXT record.
const SchemaVersion = "1.1.0"

// zone is an immutable snapshot of the cluster domain's records (and of the
// PTR records of cluster and endpoint IPs), built from the caches.
type zone struct {
	origin string // the cluster domain, lowercase and fully qualified
	ttl    uint32
	serial uint32
	// names maps every existing lowercase owner name to its records; names
	// without records of their own (svc.<origin>, <ns>.svc.<origin>) map to
	// an empty slice.
	names map[string][]dns.RR
	// reverse maps in-addr.arpa and ip6.arpa names to their PTR records.
	reverse map[string][]dns.RR
}

// zoneInput is what a zone is built from.
type zoneInput struct {
	Domain string // e.g. cluster.local
	TTL    uint32
	Serial uint32
	// DNSService names the Service whose cluster IPs are the name server's
	// ("kube-system/kube-dns"): the glue of the apex NS record.
	DNSService string
	Services   []*corev1.Service
	Slices     []*discoveryv1.EndpointSlice
}

// buildZone computes the records of the cluster domain, following the
// Kubernetes DNS schema (package documentation). It is a pure function.
func buildZone(in zoneInput) *zone {
	z := &zone{
		origin: dns.CanonicalName(in.Domain), ttl: in.TTL, serial: in.Serial,
		names: map[string][]dns.RR{}, reverse: map[string][]dns.RR{},
	}
	z.touch(z.origin)
	z.add(z.soa())
	nsName := "ns.dns." + z.origin
	z.add(&dns.NS{Hdr: z.hdr(z.origin, dns.TypeNS), Ns: nsName})
	z.add(&dns.TXT{Hdr: z.hdr("dns-version."+z.origin, dns.TypeTXT), Txt: []string{SchemaVersion}})
	z.touch("svc." + z.origin)
	z.touch("pod." + z.origin)

	bySvc := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range in.Slices {
		if name := s.Labels[discoveryv1.LabelServiceName]; name != "" {
			bySvc[s.Namespace+"/"+name] = append(bySvc[s.Namespace+"/"+name], s)
		}
	}
	srvs := map[string][]*dns.SRV{}
	for _, svc := range in.Services {
		key := svc.Namespace + "/" + svc.Name
		base := strings.ToLower(svc.Name + "." + svc.Namespace + ".svc." + z.origin)
		if _, ok := dns.IsDomainName(base); !ok {
			continue
		}
		switch {
		case svc.Spec.Type == corev1.ServiceTypeExternalName:
			if svc.Spec.ExternalName != "" {
				z.add(&dns.CNAME{Hdr: z.hdr(base, dns.TypeCNAME), Target: dns.Fqdn(strings.ToLower(svc.Spec.ExternalName))})
			}
		case svc.Spec.ClusterIP == clusterIPNone:
			z.headless(svc, base, bySvc[key], srvs)
		default:
			ips := serviceIPs(svc)
			if len(ips) == 0 {
				continue // not allocated (yet)
			}
			for _, ip := range ips {
				z.add(z.addr(base, ip))
				z.ptr(ip, base)
				if key == in.DNSService {
					z.add(z.addr(nsName, ip))
				}
			}
			for _, p := range svc.Spec.Ports {
				if p.Name == "" {
					continue
				}
				name := srvName(p.Name, string(p.Protocol), base)
				srvs[name] = append(srvs[name], &dns.SRV{Hdr: z.hdr(name, dns.TypeSRV), Port: uint16(p.Port), Target: base})
			}
		}
	}
	for _, rrs := range srvs {
		weight := uint16(max(1, 100/len(rrs)))
		slices.SortFunc(rrs, func(a, b *dns.SRV) int { return strings.Compare(a.Target, b.Target) })
		for _, rr := range rrs {
			rr.Weight = weight
			z.add(rr)
		}
	}
	return z
}

// headless adds the records of a headless Service: its ready endpoints'
// addresses under the Service's name and under <hostname>.<service>, their
// PTR records, and an SRV record per named endpoint port and endpoint.
func (z *zone) headless(svc *corev1.Service, base string, epSlices []*discoveryv1.EndpointSlice, srvs map[string][]*dns.SRV) {
	seen := map[netip.Addr]bool{}
	for _, s := range epSlices {
		if s.AddressType == discoveryv1.AddressTypeFQDN {
			continue
		}
		for _, ep := range s.Endpoints {
			if !svc.Spec.PublishNotReadyAddresses && ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				ip, err := netip.ParseAddr(a)
				if err != nil || seen[ip] {
					continue
				}
				seen[ip] = true
				host := dashed(ip)
				if ep.Hostname != nil && *ep.Hostname != "" {
					host = strings.ToLower(*ep.Hostname)
				}
				target := host + "." + base
				if _, ok := dns.IsDomainName(target); !ok {
					continue
				}
				z.add(z.addr(base, ip))
				z.add(z.addr(target, ip))
				z.ptr(ip, target)
				for _, p := range s.Ports {
					if p.Name == nil || *p.Name == "" || p.Port == nil {
						continue
					}
					proto := ""
					if p.Protocol != nil {
						proto = string(*p.Protocol)
					}
					name := srvName(*p.Name, proto, base)
					srvs[name] = append(srvs[name], &dns.SRV{Hdr: z.hdr(name, dns.TypeSRV), Port: uint16(*p.Port), Target: target})
				}
			}
		}
	}
}

// srvName is _<port>._<proto>.<base>; the protocol defaults to TCP.
func srvName(port, proto, base string) string {
	if proto == "" {
		proto = string(corev1.ProtocolTCP)
	}
	return strings.ToLower("_" + port + "._" + proto + "." + base)
}

// serviceIPs are the parsed cluster IPs of a Service.
func serviceIPs(svc *corev1.Service) []netip.Addr {
	raw := svc.Spec.ClusterIPs
	if len(raw) == 0 && svc.Spec.ClusterIP != "" {
		raw = []string{svc.Spec.ClusterIP}
	}
	var out []netip.Addr
	for _, s := range raw {
		if ip, err := netip.ParseAddr(s); err == nil {
			out = append(out, ip.Unmap())
		}
	}
	return out
}

// dashed is the endpoint name of an address without hostname, as CoreDNS
// makes it: 10-1-2-3 (IPv6: the expanded form, colons as dashes).
func dashed(ip netip.Addr) string {
	if ip.Is4() {
		return strings.ReplaceAll(ip.String(), ".", "-")
	}
	return strings.ReplaceAll(ip.StringExpanded(), ":", "-")
}

// undash parses a dashed address (dashed's inverse).
func undash(s string) (netip.Addr, bool) {
	if ip, err := netip.ParseAddr(strings.ReplaceAll(s, "-", ".")); err == nil && ip.Is4() {
		return ip, true
	}
	if ip, err := netip.ParseAddr(strings.ReplaceAll(s, "-", ":")); err == nil && ip.Is6() {
		return ip, true
	}
	return netip.Addr{}, false
}

func (z *zone) hdr(name string, t uint16) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: t, Class: dns.ClassINET, Ttl: z.ttl}
}

// addr is the A or AAAA record of ip named name.
func (z *zone) addr(name string, ip netip.Addr) dns.RR {
	if ip.Is4() {
		return &dns.A{Hdr: z.hdr(name, dns.TypeA), A: ip.AsSlice()}
	}
	return &dns.AAAA{Hdr: z.hdr(name, dns.TypeAAAA), AAAA: ip.AsSlice()}
}

func (z *zone) soa() *dns.SOA {
	return &dns.SOA{
		Hdr: z.hdr(z.origin, dns.TypeSOA), Ns: "ns.dns." + z.origin, Mbox: "hostmaster." + z.origin,
		Serial: z.serial, Refresh: 7200, Retry: 1800, Expire: 86400, Minttl: z.ttl,
	}
}

// add adds rr (unless an equal record is there) and makes its owner name and
// the names between it and the origin exist.
func (z *zone) add(rr dns.RR) {
	name := rr.Header().Name
	z.touch(name)
	for _, have := range z.names[name] {
		if dns.IsDuplicate(have, rr) {
			return
		}
	}
	z.names[name] = append(z.names[name], rr)
}

// touch makes name and its ancestors below the origin exist.
func (z *zone) touch(name string) {
	for n := name; dns.IsSubDomain(z.origin, n); {
		if _, ok := z.names[n]; ok {
			return
		}
		z.names[n] = nil
		if n == z.origin {
			return
		}
		i, _ := dns.NextLabel(n, 0)
		n = n[i:]
	}
}

// ptr adds the PTR record of ip pointing at target.
func (z *zone) ptr(ip netip.Addr, target string) {
	name, err := dns.ReverseAddr(ip.String())
	if err != nil {
		return
	}
	rr := &dns.PTR{Hdr: z.hdr(name, dns.TypePTR), Ptr: target}
	for _, have := range z.reverse[name] {
		if dns.IsDuplicate(have, rr) {
			return
		}
	}
	z.reverse[name] = append(z.reverse[name], rr)
}
