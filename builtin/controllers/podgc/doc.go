// Package podgc is the pod garbage collector, like Kubernetes'
// pkg/controller/podgc: every Period (default 20s) it lists the pods and
// nodes from the manager's informers and
//
//  1. gcTerminated: when more than TerminatedPodThreshold pods (default 12500,
//     kube-controller-manager's --terminated-pod-gc-threshold; negative
//     disables it) are terminated (phase Succeeded or Failed), deletes the
//     excess, evicted pods (Failed with reason Evicted) first, then the oldest
//     by creationTimestamp (name breaking ties);
//  2. gcTerminating: force-deletes the terminating pods (deletionTimestamp
//     set) of nodes that are not Ready and carry the
//     node.kubernetes.io/out-of-service taint, marking them Failed first;
//  3. gcOrphaned: force-deletes the pods bound to a node that does not exist.
//     A missing node is quarantined for Quarantine (default 40s) from the pass
//     that first sees it missing; the first pass after the quarantine asks the
//     API server for the node (not the cache) and, if it is still not found,
//     patches each of its pods that is not terminated to phase Failed with the
//     condition DisruptionTarget=True, reason DeletionByPodGC ("PodGC: node no
//     longer exists"), then deletes it with gracePeriodSeconds 0;
//  4. gcUnscheduledTerminating: force-deletes terminating pods that are bound
//     to no node (marking them Failed first).
//
// Force deletions carry the pod's UID as precondition; a pod already gone is
// not an error. Errors of one pass are joined and make the controller retry
// with backoff (at most Period); otherwise the next pass runs after Period.
//
// The controller is one reconcile key ("podgc") that a tick source adds once
// at start and the reconciler requeues after each pass; it runs on the
// elected leader like the other built-in controllers. Since the API server
// deletes a pod bound to a missing node gracefully (deletionTimestamp set),
// this controller is what finishes such a deletion, as in Kubernetes.
package podgc
