// Package v1 holds the discovery.k8s.io/v1 kinds (EndpointSlice): Go types with
// Kubernetes' JSON and protobuf field names, their defaults (port name "" and
// protocol TCP), validation and registration.
package v1
