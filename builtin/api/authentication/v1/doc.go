// Package v1 holds the authentication.k8s.io/v1 kinds TokenRequest (the
// serviceaccounts/token subresource's body, served by
// builtin/security/serviceaccount), TokenReview and SelfSubjectReview. The two
// reviews are create-only virtual resources: nothing is stored, the API
// server's authenticators answer them (builtin/security serves them).
// Resources() registers them for discovery with the single verb "create".
package v1
