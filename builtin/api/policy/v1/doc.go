// Package v1 holds the policy/v1 kinds: PodDisruptionBudget (a served resource
// with a status subresource) and Eviction (the body of pods/eviction, served by
// the core pods resource). It owns their Go types with Kubernetes' JSON and
// protobuf field names, validation and registration.
package v1
