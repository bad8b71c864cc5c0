package v1

import (
	"fmt"
	"reflect"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Resources returns the coordination.k8s.io/v1 resources.
func Resources() []*registry.Resource {
	return []*registry.Resource{{
		GroupVersion: GroupVersion,
		Resource:     "leases",
		Kind:         "Lease",
		ListKind:     "LeaseList",
		Singular:     "lease",
		Namespaced:   true,
		Strategy:     registry.Typed[Lease]{Validate: ValidateLease},
		Type:         reflect.TypeFor[Lease](),
		Printer:      leasePrinter(),
	}}
}

func leasePrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "Holder", Type: "string", Description: "The holder of the lease."},
			{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			l, err := registry.FromMap[Lease](obj)
			if err != nil {
				return nil, fmt.Errorf("decode lease: %w", err)
			}
			holder := ""
			if l.Spec.HolderIdentity != nil {
				holder = *l.Spec.HolderIdentity
			}
			return []any{l.Name, holder, registry.Age(l.CreationTimestamp, now)}, nil
		},
	}
}
