// Package flowcontrol keeps API Priority and Fairness configured, as every
// Kubernetes API server does: it creates the mandatory (exempt, catch-all)
// and suggested (system, node-high, leader-election, workload-high,
// workload-low, global-default and their FlowSchemas, probes included)
// FlowSchemas and PriorityLevelConfigurations of Kubernetes, hands the stored
// objects to the request filter (framework/apiserver/flowcontrol) whenever
// they change, and writes each FlowSchema's Dangling condition.
//
// Defaults are kept as Kubernetes keeps them, with the
// apf.kubernetes.io/autoupdate-spec annotation: created with "true"; a
// mandatory object is always put back (recreated when deleted, its spec
// restored when changed); a suggested one is recreated when deleted and its
// spec restored while its annotation is "true" (or absent on an object whose
// generation is still 1). Setting the annotation to "false" keeps a user's
// change of a suggested object.
package flowcontrol
