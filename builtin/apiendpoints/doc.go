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
//     "https" 443/TCP whose targetPort is the API server's port. A Service that
//     drifts (ports, type) is put back; its cluster IP is never changed.
//   - Endpoints default/kubernetes: label endpointslice.kubernetes.io/skip-mirror
//     "true", one subset with the address of every live API server and the
//     port "https" (the API server's port, TCP).
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
// storage key /registry/masterleases/ADDRESS (Kubernetes' key), whose value
// names the address and port, the refresh time and the TTL the holder chose
// (LeaseTTL; Kubernetes' etcd leases are likewise set by their writer). A
// lease is live until its refresh time plus its TTL has passed; the servers'
// clocks are assumed in step, as for Kubernetes' Lease objects. Expired leases
// are deleted (conditioned on the revision read, so a refresh in between
// wins). A stopped server thus leaves the endpoints within its TTL plus one
// Interval of a live server; one that stops cleanly deletes its lease and
// removes itself at once (best effort), unless it is the last one: like
// Kubernetes, the endpoints are never emptied. All API servers of a cluster
// serve on one port, as in Kubernetes: the endpoints carry the reconciling
// server's port.
//
// Every server computes the same objects from the same leases, so their writes
// converge; a write that loses a race (conflict) is retried at the next pass.
package apiendpoints
