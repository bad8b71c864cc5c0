// Package v1 holds the authentication.k8s.io/v1 kinds TokenRequest (the
// serviceaccounts/token subresource's body) and TokenReview. Converge serves
// TokenRequest through builtin/security/serviceaccount; TokenReview is defined
// for clients but not served yet.
package v1
