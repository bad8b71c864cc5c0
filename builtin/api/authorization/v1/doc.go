// Package v1 holds the authorization.k8s.io/v1 kinds: SubjectAccessReview,
// LocalSubjectAccessReview, SelfSubjectAccessReview and SelfSubjectRulesReview.
// They are create-only virtual resources: nothing is stored, the API server's
// authorizer answers them (builtin/security serves them). Resources() registers
// them for discovery with the single verb "create".
package v1
