// Package v1 holds the networking.k8s.io/v1 kinds: the Go types with
// Kubernetes' JSON and protobuf field names, validation with Kubernetes'
// messages, and registration.
//
//   - Ingress (namespaced, short name "ing", status subresource, printer
//     columns NAME CLASS HOSTS ADDRESS PORTS AGE): a default backend or rules;
//     each path with a pathType and exactly one backend, a service with a port
//     name or number. Ingresses are stored and served for ingress controllers;
//     Converge itself runs none.
//   - IngressClass (cluster-scoped): spec.controller a domain-prefixed path,
//     immutable; parameters with kind, name and a scope (Cluster, or Namespace
//     with a namespace).
//   - IPAddress (cluster-scoped, short name "ip"): named by the address in
//     canonical form; spec.parentRef (resource and name) required, immutable.
//   - ServiceCIDR (cluster-scoped, status subresource): one or two CIDRs in
//     canonical form, one per IP family; they never change except that a
//     single-stack range may gain the other family. The API server keeps the
//     default one, "kubernetes" (builtin/defaultservicecidr).
package v1
