// Package v1 holds the events.k8s.io/v1 kinds (Event): Go types with Kubernetes'
// JSON and protobuf field names, validation of new-style events, and
// registration with the same printer columns as core/v1 events. In Kubernetes
// both APIs share one storage; the composition root decides whether Converge does.
package v1
