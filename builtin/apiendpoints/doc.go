// Package apiendpoints keeps the default/kubernetes Service, its Endpoints and
// its EndpointSlice true, as every Kubernetes API server does (Kubernetes'
// kubernetesservice controller and lease endpoint reconciler): in-cluster
// clients find the API server through this Service (the kubelet derives the
// KUBERNETES_SERVICE_HOST/PORT variables of every pod from it).
//
// # Objects
//
//   - Service default/kubernetes: labels component=apiserver and
//     provider=kubernetes, type ClusterIP, no selector, cluster IP the first
//     usable address of the service CIDR (servicenet.Allocator's
//     APIServerServiceIP, which dynamic allocation never hands out; the create
//     reserves it through the allocator like any requested IP), one port
//     "https" 443/TCP whose targetPort is the API servers' port. A Service that
//     drifts (ports, type) is put back; its cluster IP is never changed.
//   - Endpoints default/kubernetes: label endpointslice.kubernetes.io/skip-mirror
//     "true", one subset with the address of every live API server and the
//     port "https" (the API servers' port, TCP).
//   - EndpointSlice default/kubernetes: label kubernetes.io/service-name
//     kubernetes, address type IPv4 (IPv6 when every address is), one ready
//     endpoint per live API server, the same port.
//
// The built-in endpoints and endpointslice controllers leave these alone: they
// only manage Services with a selector.
//
// # Several API servers: leases
//
// Each API server (one Reconciler each) refreshes a lease every Interval: the
// storage key /registry/masterleases/ADDRESS:PORT (Kubernetes keys them by
// address only; the port lets API servers share one address, as replicas on
// one machine do), whose value names the address and port, the refresh time
// and the TTL the holder chose (LeaseTTL; Kubernetes' etcd leases are likewise
// set by their writer). A lease is live until its refresh time plus its TTL
// has passed; the servers' clocks are assumed in step, as for Kubernetes'
// Lease objects. Expired leases are deleted (conditioned on the revision read,
// so a refresh in between wins). A stopped server thus leaves the endpoints
// within its TTL plus one Interval of a live server; one that stops cleanly
// deletes its lease and removes itself at once (best effort), unless it is the
// last one: like Kubernetes, the endpoints are never emptied.
//
// Like Kubernetes, the Service has one target port for all API servers: the
// port most live servers serve on (the lowest on a tie); the endpoints are the
// addresses of the servers on that port (servers on another port are reached
// directly, not through the Service). Every server computes the same objects
// from the same leases, so their writes converge and none undoes another's; a
// write that loses a race (conflict) is retried at the next pass.
package apiendpoints
