// Package security assembles the control plane's opt-in security: TLS from
// builtin/security/pki, authentication (x509 client certificates, a static
// token file, ServiceAccount tokens and bootstrap tokens from
// builtin/security/bootstrap), authorization by system:masters, the Node
// authorizer (builtin/security/node) and RBAC (builtin/security/rbac),
// the authorization.k8s.io review resources answered by the authorizer, the
// authentication.k8s.io ones (TokenReview answered by the bearer token
// authenticators for its audiences, SelfSubjectReview with the caller), the
// admission chain (the CSR requester, NodeRestriction, RBAC escalation
// prevention, validating and mutating webhooks), audit, in-flight limits, and
// the CertificateSigningRequest resource with its approver and signer
// (builtin/security/csr). New returns a Security whose
// APIServer() goes into apiserver.Options.Security; Attach binds it to the
// created server (the authorizer and webhooks read through its watch caches);
// Bootstrap creates the default roles and bindings.
package security
