// Package v1 holds the rbac.authorization.k8s.io/v1 kinds (Role, ClusterRole,
// RoleBinding, ClusterRoleBinding): Go types with Kubernetes' JSON and protobuf
// field names, their validation and their registration with the API server.
// Evaluation (the RBAC authorizer), escalation prevention and the default roles
// live in builtin/security/rbac.
package v1
