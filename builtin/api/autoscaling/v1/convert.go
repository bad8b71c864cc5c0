package v1

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"time"

	autoscalingv2 "github.com/converge-dev/converge/builtin/api/autoscaling/v2"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Annotations that carry, in the v1 form, the parts of an autoscaler v1
// cannot express (as Kubernetes keeps them): metrics other than the CPU
// utilization target, the behavior, the conditions and the other current
// metrics. Their values here are autoscaling/v2 JSON.
const (
	MetricsAnnotation        = "autoscaling.alpha.kubernetes.io/metrics"
	BehaviorAnnotation       = "autoscaling.alpha.kubernetes.io/behavior"
	ConditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
	CurrentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
)

// Resources returns horizontalpodautoscalers in autoscaling/v2 (the storage
// version) and autoscaling/v1, converted into each other.
func Resources() []*registry.Resource {
	v2 := autoscalingv2.Resource()
	v2.StorageVersion, v2.Convert = "v2", Convert
	v1 := *v2
	v1.GroupVersion = GroupVersion
	v1.Strategy = registry.Typed[HorizontalPodAutoscaler]{
		Default: func(h *HorizontalPodAutoscaler) {
			if h.Spec.MinReplicas == nil {
				h.Spec.MinReplicas = api.Ptr(int32(1))
			}
		},
		Validate: func(h *HorizontalPodAutoscaler) field.ErrorList {
			v, err := ToV2(h)
			if err != nil {
				return field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations"), "", err.Error())}
			}
			errs := autoscalingv2.ValidateHorizontalPodAutoscaler(v)
			if t := h.Spec.TargetCPUUtilizationPercentage; t != nil && *t < 1 {
				errs = append(errs, field.Invalid(field.NewPath("spec", "targetCPUUtilizationPercentage"), *t, "must be greater than or equal to 1"))
			}
			return errs
		},
	}
	v1.Type = reflect.TypeFor[HorizontalPodAutoscaler]()
	v1.Printer = &registry.Printer{Columns: v2.Printer.Columns, Row: func(obj map[string]any, now time.Time) ([]any, error) {
		out, err := Convert(maps.Clone(obj), autoscalingv2.GroupVersion)
		if err != nil {
			return nil, err
		}
		return v2.Printer.Row(out, now)
	}}
	return []*registry.Resource{v2, &v1}
}

// Convert converts a horizontalpodautoscaler object between autoscaling/v1
// and autoscaling/v2 (registry.Resource.Convert).
func Convert(obj map[string]any, to api.GroupVersion) (map[string]any, error) {
	from, _ := obj["apiVersion"].(string)
	if from == to.String() {
		return obj, nil
	}
	switch {
	case from == GroupVersion.String() && to == autoscalingv2.GroupVersion:
		h, err := registry.FromMap[HorizontalPodAutoscaler](obj)
		if err != nil {
			return nil, fmt.Errorf("decode autoscaling/v1 horizontalpodautoscaler: %w", err)
		}
		v, err := ToV2(h)
		if err != nil {
			return nil, err
		}
		return registry.ToMap(v)
	case from == autoscalingv2.GroupVersion.String() && to == GroupVersion:
		h, err := registry.FromMap[autoscalingv2.HorizontalPodAutoscaler](obj)
		if err != nil {
			return nil, fmt.Errorf("decode autoscaling/v2 horizontalpodautoscaler: %w", err)
		}
		v, err := FromV2(h)
		if err != nil {
			return nil, err
		}
		return registry.ToMap(v)
	}
	return nil, fmt.Errorf("cannot convert horizontalpodautoscaler from %q to %q", from, to)
}

// isCPUUtilization reports whether m is the metric v1's
// targetCPUUtilizationPercentage stands for.
func isCPUUtilization(m autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == "cpu" &&
		m.Resource.Target.Type == autoscalingv2.UtilizationMetricType && m.Resource.Target.AverageUtilization != nil
}

// FromV2 converts to v1: the first CPU utilization metric becomes
// targetCPUUtilizationPercentage, everything else an annotation.
func FromV2(in *autoscalingv2.HorizontalPodAutoscaler) (*HorizontalPodAutoscaler, error) {
	out := &HorizontalPodAutoscaler{TypeMeta: api.TypeMeta{APIVersion: GroupVersion.String(), Kind: "HorizontalPodAutoscaler"}, ObjectMeta: in.ObjectMeta}
	out.Annotations = maps.Clone(in.Annotations)
	out.Spec = HorizontalPodAutoscalerSpec{ScaleTargetRef: in.Spec.ScaleTargetRef, MinReplicas: in.Spec.MinReplicas, MaxReplicas: in.Spec.MaxReplicas}
	var other []autoscalingv2.MetricSpec
	for _, m := range in.Spec.Metrics {
		if out.Spec.TargetCPUUtilizationPercentage == nil && isCPUUtilization(m) {
			out.Spec.TargetCPUUtilizationPercentage = api.Ptr(*m.Resource.Target.AverageUtilization)
			continue
		}
		other = append(other, m)
	}
	s := in.Status
	out.Status = HorizontalPodAutoscalerStatus{ObservedGeneration: s.ObservedGeneration, LastScaleTime: s.LastScaleTime,
		CurrentReplicas: s.CurrentReplicas, DesiredReplicas: s.DesiredReplicas}
	var otherCur []autoscalingv2.MetricStatus
	for _, m := range s.CurrentMetrics {
		if out.Status.CurrentCPUUtilizationPercentage == nil && m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil &&
			m.Resource.Name == "cpu" && m.Resource.Current.AverageUtilization != nil {
			out.Status.CurrentCPUUtilizationPercentage = api.Ptr(*m.Resource.Current.AverageUtilization)
			continue
		}
		otherCur = append(otherCur, m)
	}
	for key, v := range map[string]any{MetricsAnnotation: other, BehaviorAnnotation: in.Spec.Behavior,
		ConditionsAnnotation: s.Conditions, CurrentMetricsAnnotation: otherCur} {
		if err := setAnnotation(&out.ObjectMeta, key, v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ToV2 converts from v1, taking back what FromV2 put into annotations.
func ToV2(in *HorizontalPodAutoscaler) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	out := &autoscalingv2.HorizontalPodAutoscaler{TypeMeta: api.TypeMeta{APIVersion: autoscalingv2.GroupVersion.String(), Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: in.ObjectMeta}
	out.Annotations = maps.Clone(in.Annotations)
	out.Spec = autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: in.Spec.ScaleTargetRef, MinReplicas: in.Spec.MinReplicas, MaxReplicas: in.Spec.MaxReplicas}
	if t := in.Spec.TargetCPUUtilizationPercentage; t != nil {
		out.Spec.Metrics = append(out.Spec.Metrics, autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: "cpu", Target: autoscalingv2.MetricTarget{
				Type: autoscalingv2.UtilizationMetricType, AverageUtilization: api.Ptr(*t)}}})
	}
	s := in.Status
	out.Status = autoscalingv2.HorizontalPodAutoscalerStatus{ObservedGeneration: s.ObservedGeneration, LastScaleTime: s.LastScaleTime,
		CurrentReplicas: s.CurrentReplicas, DesiredReplicas: s.DesiredReplicas}
	if c := s.CurrentCPUUtilizationPercentage; c != nil {
		out.Status.CurrentMetrics = append(out.Status.CurrentMetrics, autoscalingv2.MetricStatus{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: "cpu", Current: autoscalingv2.MetricValueStatus{AverageUtilization: api.Ptr(*c)}}})
	}
	var other []autoscalingv2.MetricSpec
	var otherCur []autoscalingv2.MetricStatus
	for key, into := range map[string]any{MetricsAnnotation: &other, BehaviorAnnotation: &out.Spec.Behavior,
		ConditionsAnnotation: &out.Status.Conditions, CurrentMetricsAnnotation: &otherCur} {
		v, ok := out.Annotations[key]
		if !ok {
			continue
		}
		delete(out.Annotations, key)
		if err := json.Unmarshal([]byte(v), into); err != nil {
			return nil, fmt.Errorf("annotation %s: %w", key, err)
		}
	}
	if len(out.Annotations) == 0 {
		out.Annotations = nil
	}
	out.Spec.Metrics = append(out.Spec.Metrics, other...)
	if len(out.Spec.Metrics) == 0 {
		// v1's default CPU target, applied in conversion as Kubernetes does
		// (it needs the metrics annotation to know there is no other metric).
		out.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: "cpu", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: api.Ptr(int32(80))}}}}
	}
	out.Status.CurrentMetrics = append(out.Status.CurrentMetrics, otherCur...)
	return out, nil
}

// setAnnotation stores v as JSON under key, unless v is empty.
func setAnnotation(m *api.ObjectMeta, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	if s := string(b); s == "null" || s == "[]" {
		return nil
	}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[key] = string(b)
	return nil
}
