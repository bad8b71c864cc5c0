package v1

import (
	"fmt"
	"reflect"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/scheme"
)

// AddToScheme registers APIService and APIServiceList in s under
// apiregistration.k8s.io/v1.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion, &APIService{}, &APIServiceList{})
}

// Resources returns the apiregistration.k8s.io/v1 resources (apiservices,
// cluster-scoped, with status). Each call builds fresh values.
func Resources() []*registry.Resource {
	return []*registry.Resource{{
		GroupVersion:      GroupVersion,
		Resource:          "apiservices",
		Kind:              "APIService",
		ListKind:          "APIServiceList",
		Singular:          "apiservice",
		Categories:        []string{"api-extensions"},
		StatusSubresource: true,
		NameValidation:    validateName,
		Strategy: registry.Typed[APIService]{
			Validate: ValidateAPIService, ValidateUpdateFunc: ValidateAPIServiceUpdate,
			ValidateStatusUpdateFunc: ValidateAPIServiceStatusUpdate,
		},
		Type:    reflect.TypeFor[APIService](),
		Printer: apiServicePrinter(),
	}}
}

func apiServicePrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "Service", Type: "string", Description: "The reference to the service that hosts the API endpoint."},
			{Name: "Available", Type: "string", Description: "Whether this service is available."},
			{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			s, err := registry.FromMap[APIService](obj)
			if err != nil {
				return nil, fmt.Errorf("decode apiservice: %w", err)
			}
			svc := "Local"
			if r := s.Spec.Service; r != nil {
				svc = r.Namespace + "/" + r.Name
			}
			avail := "Unknown"
			for _, c := range s.Status.Conditions {
				if c.Type == Available {
					avail = c.Status
					if c.Status != "True" && c.Reason != "" {
						avail += " (" + c.Reason + ")"
					}
				}
			}
			return []any{s.Name, svc, avail, registry.Age(s.CreationTimestamp, now)}, nil
		},
	}
}
