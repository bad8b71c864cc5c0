// Package v1 holds the scheduling.k8s.io/v1 kinds (PriorityClass): the Go type
// with Kubernetes' JSON and protobuf field names, defaulting (preemptionPolicy
// PreemptLowerPriority), validation (user values at most 1e9, the "system-"
// prefix reserved for the two system classes, value and preemptionPolicy
// immutable) and registration (cluster-scoped, short name "pc", printer columns
// NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY).
//
// It also owns the two system classes every cluster has (SystemPriorityClasses)
// and the priority admission step of the pod create path (PodPriority): it
// resolves spec.priorityClassName, or the global default class, into
// spec.priority and spec.preemptionPolicy, like Kubernetes' Priority admission
// plugin. The lookups it needs are function fields, so the package does no I/O.
package v1
