// Package clusterdns is the cluster DNS server, built into Converge so that no
// CoreDNS needs installing: one Server per machine, the sibling of the service
// proxy (builtin/node/proxy), run next to it by controlplane.NewNode.
//
// # Records
//
// The server is authoritative for the cluster domain (default cluster.local)
// and serves the Kubernetes DNS schema
// (https://github.com/kubernetes/dns/blob/master/docs/specification.md), as
// kube-dns and CoreDNS's kubernetes plugin do:
//
//   - <svc>.<ns>.svc.<domain>: A (AAAA for IPv6) → the cluster IPs; for a
//     headless Service the addresses of its ready endpoints (not-ready ones
//     too with publishNotReadyAddresses), from its EndpointSlices (label
//     kubernetes.io/service-name); for an ExternalName Service a CNAME to the
//     external name, whose own records are looked up upstream and added.
//   - <hostname>.<svc>.<ns>.svc.<domain> for each endpoint of a headless
//     Service: the endpoint's hostname (a pod with hostname and a subdomain
//     naming the Service) or, without one, its dashed address (10-1-2-3).
//   - _<port>._<proto>.<svc>.<ns>.svc.<domain>: SRV for each named port; the
//     target is <svc>.<ns>.svc.<domain> with the Service port, for headless
//     Services each endpoint's name with the endpoint port. The targets'
//     addresses go in the additional section.
//   - PTR for cluster IPs (→ the Service's name) and for endpoint addresses of
//     headless Services (→ the endpoint's name).
//   - <a>-<b>-<c>-<d>.<ns>.pod.<domain>: A for that address (the schema's
//     deprecated pod records, any namespace).
//   - dns-version.<domain> TXT "1.1.0" (SchemaVersion), and the apex's SOA and
//     NS (ns.dns.<domain>, with the DNS Service's cluster IPs as glue).
//
// Names are matched case-insensitively; answers keep the question's spelling.
// A name that does not exist is NXDOMAIN, a name that exists without records of
// the asked type (svc.<domain>, a Service asked for AAAA) is NODATA; both carry
// the zone's SOA in the authority section, whose minimum TTL is the record TTL
// (default 30 s, Options.TTL). kubernetes.default.svc.<domain> is the API
// server's Service like any other.
//
// # Forwarding
//
// Every other name, and reverse names that are no cluster IP or endpoint, go
// to the upstream servers: Options.Upstreams, or the nameservers of the host's
// /etc/resolv.conf (re-read when it changes; a systemd-resolved stub at
// 127.0.0.53 works, since the server runs on the host). They are tried in
// order over UDP, over TCP when an answer is truncated; when none answers, or
// there is none, the answer is SERVFAIL. An upstream that is one of the
// server's own addresses is skipped, so a host pointed at the cluster DNS does
// not loop.
//
// # Serving
//
// The server listens over UDP and TCP on the cluster IPs and ports of the
// kube-system/kube-dns Service (Options.Service), which the control plane
// creates at bootstrap with the fixed address servicenet.ClusterDNSIP (the
// tenth of the service CIDR, 127.96.0.10 by default), and on
// Options.ExtraAddresses. On the default loopback service CIDR no interface
// needs configuring; on others the address may not be local yet: addresses
// that cannot be opened are logged and retried (Options.RetryInterval), as the
// proxy does. Port 53 needs root or CAP_NET_BIND_SERVICE. The service proxy
// leaves this Service alone (it carries service.kubernetes.io/service-proxy-name,
// which proxies ignore). UDP answers are truncated (TC bit) to 512 bytes or the
// client's EDNS0 buffer size; clients retry over TCP.
//
// State comes from two informers (Services and EndpointSlices); every change
// rebuilds an immutable snapshot of the records from the caches (level-based),
// which queries read without locks.
//
// Out of scope: stub domains and per-zone upstreams, caching of forwarded
// answers, DNSSEC, zone transfers, wildcard queries, and Endpoints objects
// (only EndpointSlices are read).
package clusterdns
