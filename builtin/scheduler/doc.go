// Package scheduler assigns pending pods to nodes, with Kubernetes' semantics.
//
// A Scheduler watches pods and nodes through shared informers, keeps pending
// pods in a priority queue (package queue) and nodes with their bound and
// assumed pods in a cache (package cache). When a plugin registers
// PersistentVolumeClaim events (VolumeBinding, in the default set) it also
// watches claims and moves the pods parked for them when a claim is added or
// updated. It schedules one pod at a time:
// it takes a consistent snapshot of the cache, runs the pod's profile
// (package profile; profiles come from a KubeSchedulerConfiguration-like file,
// package config) through PreFilter, Filter (over nodes from a rotating start,
// stopping after percentageOfNodesToScore feasible nodes), PostFilter when
// nothing fits, PreScore and Score, picks the best node (ties broken at
// random), assumes the pod on it in the cache, runs Reserve and Permit, and
// hands the pod to a binding goroutine (WaitOnPermit, PreBind, Bind through
// pods/binding, PostBind) so the next cycle starts at once.
//
// The cycle is kept cheap because on a small machine the scheduler shares
// the cores with the API server and etcd: the snapshot is updated only for
// the nodes whose generation changed since the last cycle, a NodeInfo holds
// what Filter and Score read for every node (resource sums, name, taints,
// unschedulable) inline, plugins precompute per-pod data in PreFilter and
// PreScore, Filter and Score allocate nothing per node, and Filter and Score
// run on the scheduling goroutine until a serial budget (500 µs) is spent
// before fanning out to parallel workers (plugin.NewParallelizer).
//
// Metrics (package metrics) are registered on the manager's registry:
// scheduler_schedule_attempts_total{result,profile},
// scheduler_scheduling_attempt_duration_seconds{result,profile},
// scheduler_pending_pods{queue} and scheduler_preemption_attempts_total.
//
// On failure the pod gets PodScheduled=False with reason Unschedulable and
// the summary message ("0/5 nodes are available: 2 Insufficient cpu, 3
// node(s) had untolerated taint {dedicated: gpu}."), a FailedScheduling
// Warning event with the same message, and goes back to the queue. On success
// a Scheduled event says "Successfully assigned ns/pod to node".
//
// Pods whose spec.schedulerName matches no profile are ignored. The Scheduler
// is a manager Runnable that needs leader election.
//
// # Why it has its own queue
//
// It reads pods and nodes from the manager's shared informers like every
// controller, but it is not a framework/controller with a workqueue of keys:
// a workqueue hands out keys in FIFO order and treats every key alike, while
// scheduling needs the active queue ordered by priority then age (the
// QueueSort plugin), a back-off queue per pod attempt, and an unschedulable
// pool that only the cluster events a plugin registered for move back
// (package queue). It also works on the pod object as of the event, with its
// assumed state in the cache, rather than re-reading a key, because the
// scheduler's own binding is usually not yet in the informer when the next
// cycle starts. controlplane.NewScheduler runs it in its own manager, the
// same in `converge up` and `converge scheduler`.
package scheduler
