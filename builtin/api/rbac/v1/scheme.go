package v1

import "github.com/converge-dev/converge/framework/scheme"

// AddToScheme registers every top-level kind of this package, and its list type,
// in s under rbac.authorization.k8s.io/v1.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion,
		&Role{}, &RoleList{}, &RoleBinding{}, &RoleBindingList{},
		&ClusterRole{}, &ClusterRoleList{}, &ClusterRoleBinding{}, &ClusterRoleBindingList{},
	)
}
