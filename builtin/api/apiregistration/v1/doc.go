// Package v1 holds the apiregistration.k8s.io/v1 kind APIService: the Go type
// with Kubernetes' JSON and protobuf field names, validation and registration
// (cluster-scoped, status subresource, printer columns NAME SERVICE AVAILABLE
// AGE).
//
// Every group version the API server serves itself has a "local" APIService
// (no spec.service), kept by the control plane (controlplane/apiservices.go)
// as kube-apiserver's autoregistration does, so that clients which discover
// through APIServices — and the upstream discovery conformance specs — find
// them. An APIService naming a Service routes its group version to that
// Service's aggregated API server (builtin/aggregator), which checks its
// availability.
package v1
