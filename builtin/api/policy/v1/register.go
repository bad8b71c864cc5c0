package v1

import (
	"fmt"
	"reflect"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Resources returns the policy/v1 resources (poddisruptionbudgets; evictions are
// a pods subresource registered with core/v1).
func Resources() []*registry.Resource {
	return []*registry.Resource{{
		GroupVersion:      GroupVersion,
		Resource:          "poddisruptionbudgets",
		Kind:              "PodDisruptionBudget",
		ListKind:          "PodDisruptionBudgetList",
		Singular:          "poddisruptionbudget",
		ShortNames:        []string{"pdb"},
		Namespaced:        true,
		StatusSubresource: true, StatusUpdatesMetadata: true,
		Generation: true,
		Strategy:   registry.Typed[PodDisruptionBudget]{Validate: ValidatePodDisruptionBudget},
		Type:       reflect.TypeFor[PodDisruptionBudget](),
		Printer:    pdbPrinter(),
	}}
}

func pdbPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
			{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
			{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
			{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			p, err := registry.FromMap[PodDisruptionBudget](obj)
			if err != nil {
				return nil, fmt.Errorf("decode poddisruptionbudget: %w", err)
			}
			minAvailable, maxUnavailable := "N/A", "N/A"
			if p.Spec.MinAvailable != nil {
				minAvailable = p.Spec.MinAvailable.String()
			}
			if p.Spec.MaxUnavailable != nil {
				maxUnavailable = p.Spec.MaxUnavailable.String()
			}
			return []any{p.Name, minAvailable, maxUnavailable, int64(p.Status.DisruptionsAllowed),
				registry.Age(p.CreationTimestamp, now)}, nil
		},
	}
}
