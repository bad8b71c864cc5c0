// Package v1 holds the events.k8s.io/v1 kinds (Event): Go types with Kubernetes'
// JSON and protobuf field names, validation of new-style events, and
// registration with the same printer columns as core/v1 events. As in
// Kubernetes both APIs are one resource: events.k8s.io/v1 events are stored as
// core/v1 events (registry.Resource.StorageResource) and converted field by
// field (convert.go), so an event written through either API is read, watched
// and patched through the other.
package v1
