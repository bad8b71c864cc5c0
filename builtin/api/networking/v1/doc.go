// Package v1 holds the networking.k8s.io/v1 Ingress kind: the Go type with
// Kubernetes' JSON and protobuf field names, validation (a default backend
// or rules; each path with a pathType and exactly one backend, a service
// with a port name or number) and registration (namespaced, short name
// "ing", status subresource, printer columns NAME CLASS HOSTS ADDRESS PORTS
// AGE). Ingresses are stored and served for ingress controllers; Converge
// itself runs none.
package v1
