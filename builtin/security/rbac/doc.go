// Package rbac is the RBAC authorizer: it evaluates rbac.authorization.k8s.io/v1
// Roles, ClusterRoles (aggregationRule included, resolved at evaluation time),
// RoleBindings and ClusterRoleBindings, read from the API server's watch caches,
// with Kubernetes' semantics (verbs, apiGroups, resources with subresources such
// as pods/log and "*/scale", resourceNames, nonResourceURLs with trailing "*";
// subjects User, Group and ServiceAccount). It also prevents escalation (an
// admission validator: a user cannot create or update a role, or bind one,
// granting more than they hold, unless allowed "escalate" or "bind") and holds
// the default policy (cluster-admin, admin, edit, view, system:discovery, ...).
//
// Reads are eventually consistent with writes (the watch cache's delay), like
// Kubernetes' informer-based authorizer.
package rbac
