package v1

import (
	"fmt"
	"reflect"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Resources returns the scheduling.k8s.io/v1 resources (priorityclasses,
// cluster-scoped). Each call builds fresh values.
func Resources() []*registry.Resource {
	return []*registry.Resource{{
		GroupVersion: GroupVersion,
		Resource:     "priorityclasses",
		Kind:         "PriorityClass",
		ListKind:     "PriorityClassList",
		Singular:     "priorityclass",
		ShortNames:   []string{"pc"},
		Strategy: registry.Typed[PriorityClass]{
			Default: DefaultPriorityClass, Validate: ValidatePriorityClass, ValidateUpdateFunc: ValidatePriorityClassUpdate,
		},
		Type:    reflect.TypeFor[PriorityClass](),
		Printer: priorityClassPrinter(),
	}}
}

func priorityClassPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "Value", Type: "integer", Description: "value represents the integer value of this priority class."},
			{Name: "Global-Default", Type: "boolean", Description: "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class."},
			{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
			{Name: "PreemptionPolicy", Type: "string", Description: "preemptionPolicy is the Policy for preempting pods with lower priority."},
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			pc, err := registry.FromMap[PriorityClass](obj)
			if err != nil {
				return nil, fmt.Errorf("decode priorityclass: %w", err)
			}
			return []any{pc.Name, int64(pc.Value), pc.GlobalDefault, registry.Age(pc.CreationTimestamp, now),
				policyOf(pc.PreemptionPolicy)}, nil
		},
	}
}
