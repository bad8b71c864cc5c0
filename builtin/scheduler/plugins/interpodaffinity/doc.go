// Package interpodaffinity is the InterPodAffinity scheduler plugin: it places
// a pod relative to the pods already running, by topology domain (nodes that
// share the value of a node label), like kube-scheduler's plugin of the same
// name.
//
// Filter (required terms, counted once per cycle in PreFilter):
//   - the pod's required affinity: on a node with every term's topology key,
//     each term's domain must hold a pod matching all the terms (the first pod
//     of a group that matches its own terms may go anywhere while no pod
//     matches); else UnschedulableAndUnresolvable "node(s) didn't match pod
//     affinity rules";
//   - the pod's required anti-affinity: no term's domain may hold a matching
//     pod; else Unschedulable "node(s) didn't match pod anti-affinity rules";
//   - existing pods' required anti-affinity: no domain of the node may hold a
//     pod whose anti-affinity term matches the incoming pod; else Unschedulable
//     "node(s) didn't satisfy existing pods anti-affinity rules".
//
// Score (PreScore builds a score per topology domain): the incoming pod's
// preferred affinity (+weight) and anti-affinity (-weight) terms matching
// existing pods, existing pods' required affinity terms matching the incoming
// pod (+HardPodAffinityWeight, default 1), and existing pods' preferred terms
// matching it (±weight); NormalizeScore scales to [0, 100] between the lowest
// and highest node.
//
// A term selects pods of the namespaces it lists, plus those whose namespace
// labels match its namespaceSelector (an empty selector: all namespaces), or of
// the pod's own namespace when it has neither. matchLabelKeys and
// mismatchLabelKeys are merged into the selector (plugin.NewAffinityTerm).
// Namespace labels are read from the scheduler's namespace informer.
//
// The plugin implements PreFilterExtensions so that preemption can simulate
// removing victims.
package interpodaffinity
