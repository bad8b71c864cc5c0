package v2

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/scheme"
)

// AddToScheme registers the kinds and list kinds in s.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion, &HorizontalPodAutoscaler{}, &HorizontalPodAutoscalerList{})
}

// Resource returns the autoscaling/v2 horizontalpodautoscalers resource
// (stored in v2).
func Resource() *registry.Resource {
	return &registry.Resource{
		GroupVersion: GroupVersion, Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler",
		ListKind: "HorizontalPodAutoscalerList", Singular: "horizontalpodautoscaler", ShortNames: []string{"hpa"},
		Categories: []string{"all"}, Namespaced: true,
		Strategy: registry.Typed[HorizontalPodAutoscaler]{
			Default: DefaultHorizontalPodAutoscaler, Validate: ValidateHorizontalPodAutoscaler,
			ValidateStatusUpdateFunc: ValidateHorizontalPodAutoscalerStatus,
		},
		StatusSubresource: true, StatusUpdatesMetadata: true, Type: reflect.TypeFor[HorizontalPodAutoscaler](),
		Printer: Printer(),
	}
}

// Printer renders kubectl's columns: NAME REFERENCE TARGETS MINPODS MAXPODS
// REPLICAS AGE.
func Printer() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "Reference", Type: "string", Description: "reference to scaled resource; horizontal pod autoscaler will learn the current resource consumption and will set the desired number of pods by using its Scale subresource."},
			{Name: "Targets", Type: "string", Description: "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used)."},
			{Name: "MinPods", Type: "string", Description: "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down."},
			{Name: "MaxPods", Type: "integer", Description: "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up."},
			{Name: "Replicas", Type: "integer", Description: "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler."},
			{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			h, err := registry.FromMap[HorizontalPodAutoscaler](obj)
			if err != nil {
				return nil, fmt.Errorf("decode horizontalpodautoscaler: %w", err)
			}
			ref := h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name
			minPods := "<unset>"
			if h.Spec.MinReplicas != nil {
				minPods = strconv.Itoa(int(*h.Spec.MinReplicas))
			}
			return []any{h.Name, ref, Targets(h), minPods, int64(h.Spec.MaxReplicas), int64(h.Status.CurrentReplicas),
				registry.Age(h.CreationTimestamp, now)}, nil
		},
	}
}

// Targets renders the metrics as kubectl does: "cpu: 250%/50%" per metric,
// "<unknown>" for a current value not measured yet, "<none>" without metrics.
func Targets(h *HorizontalPodAutoscaler) string {
	if len(h.Spec.Metrics) == 0 {
		return "<none>"
	}
	var parts []string
	for i, m := range h.Spec.Metrics {
		var cur *MetricStatus
		if i < len(h.Status.CurrentMetrics) && h.Status.CurrentMetrics[i].Type == m.Type {
			cur = &h.Status.CurrentMetrics[i]
		}
		parts = append(parts, target(m, cur))
	}
	if len(parts) > 3 {
		return strings.Join(parts[:3], ", ") + fmt.Sprintf(" + %d more...", len(parts)-3)
	}
	return strings.Join(parts, ", ")
}

func target(m MetricSpec, cur *MetricStatus) string {
	unknown := "<unknown>"
	value := func(t MetricTarget, c *MetricValueStatus) string {
		switch {
		case t.AverageUtilization != nil:
			cs := unknown
			if c != nil && c.AverageUtilization != nil {
				cs = strconv.Itoa(int(*c.AverageUtilization)) + "%"
			}
			return cs + "/" + strconv.Itoa(int(*t.AverageUtilization)) + "%"
		case t.AverageValue != nil:
			cs := unknown
			if c != nil && c.AverageValue != nil {
				cs = c.AverageValue.S
			}
			return cs + "/" + t.AverageValue.S
		case t.Value != nil:
			cs := unknown
			if c != nil && c.Value != nil {
				cs = c.Value.S
			}
			return cs + "/" + t.Value.S
		}
		return unknown
	}
	switch m.Type {
	case ResourceMetricSourceType:
		if m.Resource != nil {
			var c *MetricValueStatus
			if cur != nil && cur.Resource != nil {
				c = &cur.Resource.Current
			}
			return string(m.Resource.Name) + ": " + value(m.Resource.Target, c)
		}
	case ContainerResourceMetricSourceType:
		if m.ContainerResource != nil {
			var c *MetricValueStatus
			if cur != nil && cur.ContainerResource != nil {
				c = &cur.ContainerResource.Current
			}
			return string(m.ContainerResource.Name) + ": " + value(m.ContainerResource.Target, c)
		}
	case PodsMetricSourceType:
		if m.Pods != nil {
			var c *MetricValueStatus
			if cur != nil && cur.Pods != nil {
				c = &cur.Pods.Current
			}
			return m.Pods.Metric.Name + ": " + value(m.Pods.Target, c)
		}
	case ObjectMetricSourceType:
		if m.Object != nil {
			var c *MetricValueStatus
			if cur != nil && cur.Object != nil {
				c = &cur.Object.Current
			}
			return m.Object.Metric.Name + ": " + value(m.Object.Target, c)
		}
	case ExternalMetricSourceType:
		if m.External != nil {
			var c *MetricValueStatus
			if cur != nil && cur.External != nil {
				c = &cur.External.Current
			}
			return m.External.Metric.Name + ": " + value(m.External.Target, c)
		}
	}
	return unknown
}
