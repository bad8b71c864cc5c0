package v1beta1

import (
	"fmt"
	"reflect"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/scheme"
)

// Resources returns the metrics.k8s.io/v1beta1 resources: nodes and pods,
// get and list only.
func Resources() []*registry.Resource {
	verbs := []string{"get", "list"}
	return []*registry.Resource{
		{
			GroupVersion: GroupVersion, Resource: "nodes", Kind: "NodeMetrics", ListKind: "NodeMetricsList",
			Verbs: verbs, Strategy: registry.Typed[NodeMetrics]{}, Type: reflect.TypeFor[NodeMetrics](),
			Printer: NodeMetricsPrinter(),
		},
		{
			GroupVersion: GroupVersion, Resource: "pods", Kind: "PodMetrics", ListKind: "PodMetricsList",
			Namespaced: true, Verbs: verbs, Strategy: registry.Typed[PodMetrics]{}, Type: reflect.TypeFor[PodMetrics](),
			Printer: PodMetricsPrinter(),
		},
	}
}

// NodeMetricsPrinter renders NAME CPU MEMORY WINDOW.
func NodeMetricsPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name of the node."},
			{Name: "CPU", Type: "string", Description: "CPU usage."},
			{Name: "Memory", Type: "string", Description: "Memory working set."},
			{Name: "Window", Type: "string", Description: "The window CPU usage is averaged over."},
		},
		Row: func(obj map[string]any, _ time.Time) ([]any, error) {
			m, err := registry.FromMap[NodeMetrics](obj)
			if err != nil {
				return nil, fmt.Errorf("decode node metrics: %w", err)
			}
			return []any{m.Name, m.Usage["cpu"].S, m.Usage["memory"].S, m.Window.String()}, nil
		},
	}
}

// PodMetricsPrinter renders NAME CONTAINERS WINDOW.
func PodMetricsPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name of the pod."},
			{Name: "Containers", Type: "integer", Description: "Number of containers measured."},
			{Name: "Window", Type: "string", Description: "The window CPU usage is averaged over."},
		},
		Row: func(obj map[string]any, _ time.Time) ([]any, error) {
			m, err := registry.FromMap[PodMetrics](obj)
			if err != nil {
				return nil, fmt.Errorf("decode pod metrics: %w", err)
			}
			return []any{m.Name, int64(len(m.Containers)), m.Window.String()}, nil
		},
	}
}

// AddToScheme registers the kinds and list kinds in s.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion, &NodeMetrics{}, &NodeMetricsList{}, &PodMetrics{}, &PodMetricsList{})
}
