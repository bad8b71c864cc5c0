// Package proxy makes Service addresses work on a machine without kernel
// packet rewriting: it is a userspace TCP and UDP proxy, the node agent's equivalent of
// kube-proxy for the process runtime, where every pod has its own loopback IP.
//
// For every TCP and UDP port of every Service with a cluster IP it listens on
// clusterIP:port, and for NodePort and LoadBalancer Services also on
// ADDR:nodePort for each configured node port address (default 0.0.0.0).
// Each accepted connection goes to the next ready endpoint, round robin, from
// the Service's EndpointSlices (label kubernetes.io/service-name, the endpoint
// port with the Service port's name); a backend that refuses the connection
// is skipped for the next one. Endpoints whose ready condition is false are
// not used, unless none is ready, when serving-and-terminating endpoints are
// (as kube-proxy does). Listeners come and go with the Services; their
// backends change in place, so established connections are never cut by an
// endpoint change. When Start returns every listener and proxied connection
// is closed.
//
// State comes from two informers (Services and EndpointSlices); every change
// recomputes the wanted listeners from the caches (level-based), so the proxy
// converges whatever order events arrive in. Listeners that cannot be opened
// (address in use, no permission for a port below 1024) are logged and
// retried.
//
// On Linux the whole of 127.0.0.0/8 is routed to lo, so listening on
// 127.x.y.z (the default service CIDR 127.96.0.0/12, see builtin/servicenet)
// needs no interface configuration. Cluster IPs outside it (10.43.0.0/16 with
// the containerd runtime, whose pods have their own network namespaces) are
// added as /32 addresses to an interface the proxy owns (Options.Interface,
// "converge0": a dummy, or a bridge without ports where the kernel has no
// dummy driver) before it listens on them, and removed when their Services
// go. Proxies of several control planes on one machine may share the
// interface: each removes only the addresses it added, puts back its own
// when something else removed them (checked every RetryInterval), and
// deletes the interface when Start returns only if no address is left on it. Pods reach them through
// their bridge gateway. This needs CAP_NET_ADMIN; without it those listeners
// fail and are retried. Ports below 1024 need root or
// CAP_NET_BIND_SERVICE (or net.ipv4.ip_unprivileged_port_start=0).
//
// Services labelled service.kubernetes.io/service-proxy-name are served by
// another proxy and skipped, as kube-proxy does (the cluster DNS server,
// builtin/clusterdns, serves kube-system/kube-dns itself).
//
// A Service with sessionAffinity ClientIP sends each client IP to the
// endpoint it last used, for the affinity timeout, while that endpoint stays
// in the Service and accepts connections. As kube-proxy's, the affinity is the
// Service port's: its cluster IPs and node ports share one table.
//
// UDP ports are proxied too: each client address is a flow to one endpoint
// (chosen as for a TCP connection), whose answers go back from the Service's
// address; a flow ends after 30 s without an answer.
//
// Out of scope: SCTP ports (skipped), external IPs,
// load balancer ingress IPs, internal/external traffic policy Local (all
// endpoints are used), topology hints, and reaching pods on other machines
// (process-runtime pod IPs are machine-local loopback addresses).
package proxy
