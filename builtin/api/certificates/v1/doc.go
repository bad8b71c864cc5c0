// Package v1 holds the certificates.k8s.io/v1 kind CertificateSigningRequest:
// Go types with Kubernetes' JSON and protobuf field names, validation, and its
// registration with the API server (status and approval subresources, printer
// columns). Who asked (spec.username, groups, uid, extra) is filled in by the
// API server's admission from the authenticated user, never by the client;
// approval and signing are done by controllers (builtin/security/csr).
package v1
