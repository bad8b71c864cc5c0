// Package v1 holds the flowcontrol.apiserver.k8s.io/v1 kinds FlowSchema and
// PriorityLevelConfiguration (API Priority and Fairness): the Go types with
// Kubernetes' JSON and protobuf field names, defaulting (matchingPrecedence
// 1000; 30 nominal concurrency shares and queues 64/8/50 for limited levels),
// validation and registration (cluster-scoped, status subresources, printer
// columns as kubectl shows them). builtin/flowcontrol creates the default
// objects and framework/apiserver/flowcontrol enforces them.
package v1
