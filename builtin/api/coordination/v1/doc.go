// Package v1 holds the coordination.k8s.io/v1 kinds (Lease): Go types with
// Kubernetes' JSON and protobuf field names, their validation (ValidateLease) and
// their registration with the API server (strategy and printer columns). Leases
// have no defaults.
package v1
