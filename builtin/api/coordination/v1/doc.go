// Package v1 holds the coordination.k8s.io/v1 kinds (Lease): Go types with
// Kubernetes' JSON and protobuf field names, and their registration with the API
// server (strategy and printer columns). Leases have no defaults and no
// validation beyond object metadata.
package v1
