package v1

import (
	"fmt"
	"reflect"
	"time"

	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/scheme"
)

// Resources returns the storage.k8s.io/v1 resources (csinodes,
// cluster-scoped). Each call builds fresh values.
func Resources() []*registry.Resource {
	return []*registry.Resource{{
		GroupVersion: GroupVersion, Resource: "csinodes", Kind: "CSINode", ListKind: "CSINodeList", Singular: "csinode",
		Strategy:       registry.Typed[CSINode]{Validate: ValidateCSINode, ValidateUpdateFunc: func(n, _ *CSINode) field.ErrorList { return ValidateCSINode(n) }},
		NameValidation: validation.NameIsDNSSubdomain,
		Type:           reflect.TypeFor[CSINode](),
		Printer: &registry.Printer{
			Columns: []registry.Column{
				{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
				{Name: "Drivers", Type: "integer", Description: "Drivers indicates the number of CSI drivers registered on the node"},
				{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
			},
			Row: func(obj map[string]any, now time.Time) ([]any, error) {
				n, err := registry.FromMap[CSINode](obj)
				if err != nil {
					return nil, fmt.Errorf("decode csinode: %w", err)
				}
				return []any{n.Name, int64(len(n.Spec.Drivers)), registry.Age(n.CreationTimestamp, now)}, nil
			},
		},
	}}
}

// AddToScheme registers CSINode and CSINodeList in s under storage.k8s.io/v1.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion, &CSINode{}, &CSINodeList{})
}

// ValidateCSINode checks a CSINode: each driver named once, with a node ID,
// and a non-negative allocatable count.
func ValidateCSINode(n *CSINode) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, d := range n.Spec.Drivers {
		p := field.NewPath("spec", "drivers").Index(i)
		switch {
		case d.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case seen[d.Name]:
			errs = append(errs, field.Duplicate(p.Child("name"), d.Name))
		}
		seen[d.Name] = true
		if d.NodeID == "" {
			errs = append(errs, field.Required(p.Child("nodeID"), ""))
		}
		if a := d.Allocatable; a != nil && a.Count != nil && *a.Count < 0 {
			errs = append(errs, field.Invalid(p.Child("allocatable", "count"), *a.Count, "must be greater than or equal to 0"))
		}
	}
	return errs
}
