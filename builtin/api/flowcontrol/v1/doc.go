// Package v1 holds the flowcontrol.apiserver.k8s.io/v1 kinds FlowSchema and
// PriorityLevelConfiguration (API Priority and Fairness): the Go types with
// Kubernetes' JSON and protobuf field names, defaulting (matchingPrecedence
// 1000; 30 nominal concurrency shares and queues 64/8/50 for limited levels),
// validation and registration (cluster-scoped, status subresources, printer
// columns as kubectl shows them). The objects are stored and served so that
// clients and tools that manage them work; Converge's own request limits are
// the in-flight limits of builtin/security, not these priority levels.
package v1
