// Package scheduler assigns pending pods to nodes, with Kubernetes' semantics.
//
// A Scheduler watches pods and nodes through shared informers, keeps pending
// pods in a priority queue (package queue) and nodes with their bound and
// assumed pods in a cache (package cache). It schedules one pod at a time:
// it takes a consistent snapshot of the cache, runs the pod's profile
// (package runtime; profiles come from a KubeSchedulerConfiguration-like file,
// package config) through PreFilter, Filter (in parallel over nodes, stopping
// after percentageOfNodesToScore feasible nodes), PostFilter when nothing fits,
// PreScore and Score (in parallel), picks the best node (ties broken at
// random), assumes the pod on it in the cache, runs Reserve and Permit, and
// hands the pod to a binding goroutine (WaitOnPermit, PreBind, Bind through
// pods/binding, PostBind) so the next cycle starts at once.
//
// On failure the pod gets PodScheduled=False with reason Unschedulable and
// the summary message ("0/5 nodes are available: 2 Insufficient cpu, 3
// node(s) had untolerated taint {dedicated: gpu}."), a FailedScheduling
// Warning event with the same message, and goes back to the queue. On success
// a Scheduled event says "Successfully assigned ns/pod to node".
//
// Pods whose spec.schedulerName matches no profile are ignored. The Scheduler
// is a manager Runnable that needs leader election.
package scheduler
