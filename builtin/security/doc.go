// Package security assembles the control plane's opt-in security: TLS from
// builtin/security/pki, authentication (x509 client certificates and a static
// token file), RBAC authorization (builtin/security/rbac) behind system:masters,
// the authorization.k8s.io review resources answered by the authorizer, the
// admission chain (RBAC escalation prevention, validating and mutating
// webhooks), audit and in-flight limits. New returns a Security whose
// APIServer() goes into apiserver.Options.Security; Attach binds it to the
// created server (the authorizer and webhooks read through its watch caches);
// Bootstrap creates the default roles and bindings.
package security
