package v1

import (
	"fmt"
	"reflect"
	"time"

	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Resources returns the rbac.authorization.k8s.io/v1 resources.
func Resources() []*registry.Resource {
	return []*registry.Resource{
		{
			GroupVersion: GroupVersion, Resource: "roles", Kind: "Role", ListKind: "RoleList", Singular: "role", NameValidation: ValidatePathSegmentName,
			Namespaced: true, Strategy: registry.Typed[Role]{Validate: ValidateRole},
			Type: reflect.TypeFor[Role](), Printer: rolePrinter[Role](func(r *Role) (string, any) { return r.Name, r.CreationTimestamp }),
		},
		{
			GroupVersion: GroupVersion, Resource: "clusterroles", Kind: "ClusterRole", ListKind: "ClusterRoleList", Singular: "clusterrole", NameValidation: ValidatePathSegmentName,
			Strategy: registry.Typed[ClusterRole]{Validate: ValidateClusterRole},
			Type:     reflect.TypeFor[ClusterRole](), Printer: rolePrinter[ClusterRole](func(r *ClusterRole) (string, any) { return r.Name, r.CreationTimestamp }),
		},
		{
			GroupVersion: GroupVersion, Resource: "rolebindings", Kind: "RoleBinding", ListKind: "RoleBindingList", Singular: "rolebinding", NameValidation: ValidatePathSegmentName,
			Namespaced: true,
			Strategy: registry.Typed[RoleBinding]{Default: DefaultRoleBinding, Validate: ValidateRoleBinding, ValidateUpdateFunc: func(b, old *RoleBinding) field.ErrorList {
				return append(ValidateRoleBinding(b), roleRefImmutable(b.RoleRef, old.RoleRef)...)
			}},
			Type: reflect.TypeFor[RoleBinding](), Printer: bindingPrinter(false),
		},
		{
			GroupVersion: GroupVersion, Resource: "clusterrolebindings", Kind: "ClusterRoleBinding", ListKind: "ClusterRoleBindingList", Singular: "clusterrolebinding", NameValidation: ValidatePathSegmentName,
			Strategy: registry.Typed[ClusterRoleBinding]{Default: DefaultClusterRoleBinding, Validate: ValidateClusterRoleBinding, ValidateUpdateFunc: func(b, old *ClusterRoleBinding) field.ErrorList {
				return append(ValidateClusterRoleBinding(b), roleRefImmutable(b.RoleRef, old.RoleRef)...)
			}},
			Type: reflect.TypeFor[ClusterRoleBinding](), Printer: bindingPrinter(true),
		},
	}
}

func rolePrinter[T any](_ func(*T) (string, any)) *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "Created At", Type: "date", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
		},
		Row: func(obj map[string]any, _ time.Time) ([]any, error) {
			b, err := registry.FromMap[ClusterRole](obj)
			if err != nil {
				return nil, fmt.Errorf("decode role: %w", err)
			}
			return []any{b.Name, b.CreationTimestamp.UTC().Format(time.RFC3339)}, nil
		},
	}
}

func bindingPrinter(cluster bool) *registry.Printer {
	cols := []registry.Column{
		{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
		{Name: "Role", Type: "string", Description: "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace."},
		{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
		{Name: "Users", Type: "string", Priority: 1, Description: "Users in the binding"},
		{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the binding"},
		{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the binding"},
	}
	_ = cluster
	return &registry.Printer{
		Columns: cols,
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			b, err := registry.FromMap[RoleBinding](obj)
			if err != nil {
				return nil, fmt.Errorf("decode binding: %w", err)
			}
			var users, groups, sas []string
			for _, s := range b.Subjects {
				switch s.Kind {
				case UserKind:
					users = append(users, s.Name)
				case GroupKind:
					groups = append(groups, s.Name)
				case ServiceAccountKind:
					sas = append(sas, s.Namespace+"/"+s.Name)
				}
			}
			return []any{b.Name, b.RoleRef.Kind + "/" + b.RoleRef.Name, registry.Age(b.CreationTimestamp, now),
				join(users), join(groups), join(sas)}, nil
		},
	}
}

func join(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}
