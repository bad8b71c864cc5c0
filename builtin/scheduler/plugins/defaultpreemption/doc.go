// Package defaultpreemption is the DefaultPreemption scheduler plugin
// (PostFilter): when no node fits a pod, it looks for a node where deleting
// pods of lower priority would make the pod fit, like kube-scheduler's plugin
// of the same name.
//
// The steps, as in Kubernetes:
//  1. Eligibility: a pod with preemptionPolicy Never does not preempt; a pod
//     whose nominated node still has a lower-priority victim terminating (by
//     preemption) waits for it instead of preempting again.
//  2. Candidates: only nodes whose filter status is Unschedulable (not
//     UnschedulableAndUnresolvable) may help. On a private copy of each such
//     node (dry run, starting at a random offset and stopping after
//     max(10% of them, 100) candidates without budget violations), every pod
//     of lower priority is removed and the filters re-run (with the nominated
//     pods); if the pod fits, victims are reprieved one by one from the highest
//     priority down, first those whose eviction would violate a
//     PodDisruptionBudget (status.disruptionsAllowed, selector, namespace;
//     pods already in status.disruptedPods do not count), then the others, and
//     re-removed when the pod no longer fits.
//  3. Choice: fewest budget violations, then the lowest highest-victim
//     priority, the smallest sum of victim priorities, the fewest victims, and
//     the latest start time of the highest-priority victims; then the first.
//  4. Preparation: each victim (a pod waiting at Permit is rejected instead)
//     gets the DisruptionTarget condition (reason PreemptionByScheduler), is
//     deleted gracefully and gets a Preempted event; lower-priority pods
//     nominated to the node lose their nomination.
//  5. Result: the chosen node as the preemptor's nomination (ModeOverride); the
//     scheduler writes it to status.nominatedNodeName.
//
// Without a candidate the status is Unschedulable with a FitError summary
// prefixed "preemption: ", e.g. "preemption: 0/3 nodes are available: 3
// Preemption is not helpful for scheduling." or "preemption: 0/5 nodes are
// available: 5 No preemption victims found for incoming pod.".
package defaultpreemption
