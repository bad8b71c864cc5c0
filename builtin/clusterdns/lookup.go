package clusterdns

import (
	"strings"

	"github.com/miekg/dns"
)

// result is the zone's answer to one question.
type result struct {
	// Forward means the name is not the zone's: ask the upstream servers.
	Forward bool
	Rcode   int
	// Authoritative is set for names of the cluster domain.
	Authoritative bool
	Answer        []dns.RR
	Ns            []dns.RR
	Extra         []dns.RR
	// Chase is a CNAME target outside the zone whose records of the question's
	// type the server should resolve upstream and add to Answer.
	Chase string
}

// lookup answers q from the zone. Owner names in the answer keep the
// question's spelling (comparisons are case-insensitive).
func (z *zone) lookup(q dns.Question) result {
	name := strings.ToLower(dns.Fqdn(q.Name))
	if rrs, ok := z.reverse[name]; ok {
		if q.Qtype == dns.TypePTR || q.Qtype == dns.TypeANY {
			return result{Rcode: dns.RcodeSuccess, Authoritative: true, Answer: renamed(rrs, q.Name)}
		}
		return result{Rcode: dns.RcodeSuccess, Authoritative: true}
	}
	if !dns.IsSubDomain(z.origin, name) {
		return result{Forward: true}
	}
	rrs, ok := z.names[name]
	if !ok {
		rrs, ok = z.pod(name)
	}
	if !ok {
		return result{Rcode: dns.RcodeNameError, Authoritative: true, Ns: []dns.RR{z.soa()}}
	}
	res := result{Rcode: dns.RcodeSuccess, Authoritative: true}
	res.Answer = renamed(ofType(rrs, q.Qtype), q.Name)
	if len(res.Answer) == 0 && q.Qtype != dns.TypeCNAME {
		if cn := ofType(rrs, dns.TypeCNAME); len(cn) > 0 {
			res.Answer = renamed(cn, q.Name)
			target := cn[0].(*dns.CNAME).Target
			if dns.IsSubDomain(z.origin, target) {
				res.Answer = append(res.Answer, ofType(z.names[target], q.Qtype)...)
			} else {
				res.Chase = target
			}
			return res
		}
	}
	if len(res.Answer) == 0 {
		res.Ns = []dns.RR{z.soa()} // NODATA
		return res
	}
	for _, rr := range res.Answer {
		var target string
		switch rr := rr.(type) {
		case *dns.SRV:
			target = rr.Target
		case *dns.NS:
			target = rr.Ns
		default:
			continue
		}
		res.Extra = append(res.Extra, ofType(z.names[target], dns.TypeA)...)
		res.Extra = append(res.Extra, ofType(z.names[target], dns.TypeAAAA)...)
	}
	return res
}

// pod answers <a>-<b>-<c>-<d>.<ns>.pod.<origin> with that address (the
// schema's deprecated pod records; any namespace, as CoreDNS's "pods
// insecure").
func (z *zone) pod(name string) ([]dns.RR, bool) {
	labels := dns.SplitDomainName(strings.TrimSuffix(name, "pod."+z.origin))
	if !strings.HasSuffix(name, ".pod."+z.origin) || len(labels) == 0 || len(labels) > 2 {
		return nil, false
	}
	if len(labels) == 1 {
		return nil, true // <ns>.pod.<origin>: exists, no records
	}
	ip, ok := undash(labels[0])
	if !ok {
		return nil, false
	}
	return []dns.RR{z.addr(name, ip)}, true
}

// ofType returns the records of type t (all of them for ANY).
func ofType(rrs []dns.RR, t uint16) []dns.RR {
	var out []dns.RR
	for _, rr := range rrs {
		if t == dns.TypeANY || rr.Header().Rrtype == t {
			out = append(out, rr)
		}
	}
	return out
}

// renamed copies rrs with owner name (the question's spelling).
func renamed(rrs []dns.RR, name string) []dns.RR {
	out := make([]dns.RR, len(rrs))
	for i, rr := range rrs {
		c := dns.Copy(rr)
		c.Header().Name = name
		out[i] = c
	}
	return out
}
