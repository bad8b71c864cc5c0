// Package v1 holds the node.k8s.io/v1 kinds (RuntimeClass): the Go type with
// Kubernetes' JSON and protobuf field names, validation (handler a DNS label
// and immutable, overhead quantities non-negative, scheduling node selector
// labels and tolerations valid) and registration (cluster-scoped, printer
// columns NAME HANDLER AGE).
//
// It also owns the RuntimeClass admission step of the pod create path
// (PodRuntimeClass), as Kubernetes' RuntimeClass admission plugin: a pod naming
// a RuntimeClass that does not exist is refused, the class's pod overhead is
// copied into spec.overhead (a pod that sets another overhead is refused) and
// the class's scheduling node selector and tolerations are merged into the
// pod's. Its lookup is a function field, so the package does no I/O.
package v1
