// Package servicenet allocates the addresses of Services: cluster IPs from a
// service CIDR and node ports from a port range, as Kubernetes' API server does
// on create, and releases them when Services change type or go away.
//
// # Ranges
//
// The default service CIDR is 127.96.0.0/12 (127.96.0.0–127.111.255.255), a
// loopback range: on Linux the whole of 127.0.0.0/8 is routed to lo, so the
// service proxy (builtin/node/proxy) can listen on any of these addresses
// without configuring interfaces. It stays clear of 127.0.0.1 and of the pod
// addresses of the process runtime (127.10.0.0/16). The network and broadcast
// addresses of the CIDR are never handed out. The first usable address
// (APIServerServiceIP, 127.96.0.1 by default) belongs to the default/kubernetes
// Service, as in Kubernetes: dynamic allocation skips it, and only a Service
// that requests it explicitly (the API server's own, see builtin/apiendpoints)
// reserves it. Likewise the tenth address (ClusterDNSIP, 127.96.0.10 by
// default, as kubeadm picks it) is withheld for the kube-system/kube-dns
// Service of the cluster DNS server (builtin/clusterdns). Node ports come from
// 30000–32767. Only IPv4 single-stack Services are supported: dual-stack
// requests are refused with Kubernetes' messages.
//
// # Reservations
//
// Every reserved IP and port is one storage key, written with create-if-absent:
// /registry/ranges/serviceips/<ip> and /registry/ranges/servicenodeports/<port>,
// whose value names the owning Service (namespace, name, uid). Reservations are
// therefore atomic across concurrent requests and across API servers sharing
// one etcd, and nothing is kept in memory. Reserving a value the same Service
// (same uid) already holds succeeds, so retried writes are idempotent. Releases
// delete the key only while it still belongs to the releasing Service.
//
// # Plugging into the API server
//
// WrapServiceResource wraps the core/v1 Service strategy: PrepareForCreate and
// PrepareForUpdate normalise clusterIP/clusterIPs and keep allocated values a
// client omitted on update (Kubernetes' patchAllocatedValues); AdmitCreate and
// AdmitUpdate (registry.Admitter) reserve after validation, before the write,
// and undo what they reserved when the write fails; values an update gives up
// are released after it is stored; Deleted (registry.DeleteHook) releases a
// deleted Service's values.
//
// # Repair
//
// A crash between a reservation and the write, or between a delete and its
// release, leaves a reservation behind; a restored or migrated store may hold
// Services without reservations. Repairer (Kubernetes' repair controllers)
// lists Services and reservations: it reserves the values of existing Services
// that lack one, and releases reservations that no Service uses once it has
// seen the same reservation (same revision) unused in two consecutive passes,
// so writes in flight are never disturbed. Services whose values collide or
// lie outside the configured ranges are reported in the log, not changed.
package servicenet
