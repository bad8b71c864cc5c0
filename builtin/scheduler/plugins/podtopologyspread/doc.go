// Package podtopologyspread is the PodTopologySpread scheduler plugin: it
// spreads pods that match a label selector evenly over topology domains
// (nodes grouped by the value of a node label), like kube-scheduler's plugin of
// the same name.
//
// Constraints come from spec.topologySpreadConstraints; a pod without any gets
// the cluster defaults (kubernetes.io/hostname with maxSkew 3 and
// topology.kubernetes.io/zone with maxSkew 5, both ScheduleAnyway) over the
// labels of the services, replica sets, replication controllers and stateful
// sets that select it, and none when nothing selects it.
//
// DoNotSchedule constraints filter (PreFilter counts matching pods per domain,
// Filter rejects a node whose domain would exceed maxSkew over the global
// minimum, taking minDomains into account) with the reason "node(s) didn't
// match pod topology spread constraints"; ScheduleAnyway constraints score
// (PreScore counts, Score weighs each domain's count by log(domains+2),
// NormalizeScore maps fewer matching pods to higher scores). Only nodes that
// carry every constraint's topology key, and that pass the constraint's
// nodeAffinityPolicy (Honor by default: the pod's nodeSelector and required
// node affinity) and nodeTaintsPolicy (Ignore by default), are counted; only
// pods in the incoming pod's namespace that are not being deleted are counted.
// matchLabelKeys add "key in (value of the pod's label)" to the selector.
//
// The plugin implements PreFilterExtensions so that preemption can simulate
// removing victims.
package podtopologyspread
