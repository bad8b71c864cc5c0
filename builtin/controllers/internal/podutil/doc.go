// Package podutil holds what the workload controllers (ReplicaSet, Deployment,
// DaemonSet) share: pod readiness and availability as Kubernetes defines them,
// the order in which surplus pods are deleted, Expectations, the per-owner
// record of creations and deletions a controller has issued but not yet seen in
// its cache, Backoff, a per-key exponential backoff, and IndexByNode, the
// pods-by-node index of the cache.
//
// Everything here is pure or guarded by its own mutex; nothing calls the API
// server.
package podutil
