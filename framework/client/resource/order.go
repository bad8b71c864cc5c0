package resource

import (
	"slices"

	"github.com/converge-dev/converge/framework/api"
)

// CRDGroupKind is the kind of CustomResourceDefinitions.
var CRDGroupKind = api.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// IsCRD reports whether obj is a CustomResourceDefinition.
func IsCRD(obj *api.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == CRDGroupKind.Group && gvk.Kind == CRDGroupKind.Kind
}

// IsNamespace reports whether obj is a core Namespace.
func IsNamespace(obj *api.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Namespace"
}

// SortForApply orders objs in place for applying: Namespaces, then
// CustomResourceDefinitions, then everything else, each group in input order.
func SortForApply(objs []Object) {
	rank := func(o Object) int {
		switch {
		case IsNamespace(o.Object):
			return 0
		case IsCRD(o.Object):
			return 1
		}
		return 2
	}
	slices.SortStableFunc(objs, func(a, b Object) int { return rank(a) - rank(b) })
}
