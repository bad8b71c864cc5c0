// Package rbac turns +kubebuilder:rbac markers into the ClusterRoles and
// Roles controller-gen writes: one role per (namespace, roleName), rules
// normalised as controller-gen does (the group "core" is ""; rules that
// differ only in verbs, resources, groups or URLs are merged; lists sorted
// and deduplicated; "*" among the verbs stands alone).
package rbac
