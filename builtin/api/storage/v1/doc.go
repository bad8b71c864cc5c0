// Package v1 holds the storage.k8s.io/v1 CSINode kind: the Go type with
// Kubernetes' JSON and protobuf field names, validation (driver names
// required and unique, non-negative allocatable counts) and registration
// (cluster-scoped, printer columns NAME DRIVERS AGE). A CSINode describes the
// CSI drivers installed on the node of the same name; node agents with CSI
// drivers write it.
package v1
