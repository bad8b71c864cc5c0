package v1

import (
	"fmt"
	"reflect"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Resources returns the node.k8s.io/v1 resources (runtimeclasses,
// cluster-scoped). Each call builds fresh values.
func Resources() []*registry.Resource {
	return []*registry.Resource{{
		GroupVersion: GroupVersion,
		Resource:     "runtimeclasses",
		Kind:         "RuntimeClass",
		ListKind:     "RuntimeClassList",
		Singular:     "runtimeclass",
		Strategy: registry.Typed[RuntimeClass]{
			Validate: ValidateRuntimeClass, ValidateUpdateFunc: ValidateRuntimeClassUpdate,
		},
		Type:    reflect.TypeFor[RuntimeClass](),
		Printer: runtimeClassPrinter(),
	}}
}

func runtimeClassPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "Handler", Type: "string", Description: "handler specifies the underlying runtime and configuration that the CRI implementation will use to handle pods of this class."},
			{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			rc, err := registry.FromMap[RuntimeClass](obj)
			if err != nil {
				return nil, fmt.Errorf("decode runtimeclass: %w", err)
			}
			return []any{rc.Name, rc.Handler, registry.Age(rc.CreationTimestamp, now)}, nil
		},
	}
}
