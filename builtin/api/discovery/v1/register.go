package v1

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Resources returns the discovery.k8s.io/v1 resources.
func Resources() []*registry.Resource {
	return []*registry.Resource{{
		GroupVersion: GroupVersion,
		Resource:     "endpointslices",
		Kind:         "EndpointSlice",
		ListKind:     "EndpointSliceList",
		Singular:     "endpointslice",
		Namespaced:   true,
		Strategy: registry.Typed[EndpointSlice]{
			Default:            DefaultEndpointSlice,
			Validate:           ValidateEndpointSlice,
			ValidateUpdateFunc: ValidateEndpointSliceUpdate,
		},
		Type:    reflect.TypeFor[EndpointSlice](),
		Printer: endpointSlicePrinter(),
	}}
}

func endpointSlicePrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "AddressType", Type: "string", Description: "addressType specifies the type of address carried by this EndpointSlice."},
			{Name: "Ports", Type: "string", Description: "ports specifies the list of network ports exposed by each endpoint in this slice."},
			{Name: "Endpoints", Type: "string", Description: "endpoints is a list of unique endpoints in this slice."},
			{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			s, err := registry.FromMap[EndpointSlice](obj)
			if err != nil {
				return nil, fmt.Errorf("decode endpointslice: %w", err)
			}
			return []any{s.Name, string(s.AddressType), formatPorts(s.Ports), formatEndpoints(s.Endpoints),
				registry.Age(s.CreationTimestamp, now)}, nil
		},
	}
}

const maxListed = 3

func formatPorts(ports []EndpointPort) string {
	var list []string
	for _, p := range ports {
		if len(list) == maxListed {
			break
		}
		switch {
		case p.Port != nil:
			list = append(list, strconv.Itoa(int(*p.Port)))
		case p.Name != nil:
			list = append(list, *p.Name)
		default:
			list = append(list, "*")
		}
	}
	return listWithMore(list, len(ports))
}

func formatEndpoints(eps []Endpoint) string {
	var list []string
	count := 0
	for _, ep := range eps {
		for _, a := range ep.Addresses {
			if len(list) < maxListed {
				list = append(list, a)
			}
			count++
		}
	}
	return listWithMore(list, count)
}

// listWithMore is kubectl's listWithMoreString: "a,b,c + 2 more...", or "<unset>".
func listWithMore(list []string, count int) string {
	s := strings.Join(list, ",")
	if count > maxListed {
		return fmt.Sprintf("%s + %d more...", s, count-maxListed)
	}
	if s == "" {
		return "<unset>"
	}
	return s
}
