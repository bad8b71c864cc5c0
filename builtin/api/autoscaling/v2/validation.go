package v2

import (
	"fmt"
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

// Limits of the scaling rules.
const (
	MaxStabilizationWindowSeconds = 3600
	MaxPeriodSeconds              = 1800
)

// ValidateHorizontalPodAutoscaler checks an autoscaler (metadata excluded)
// with Kubernetes' rules and messages.
func ValidateHorizontalPodAutoscaler(h *HorizontalPodAutoscaler) field.ErrorList {
	var errs field.ErrorList
	s, p := &h.Spec, field.NewPath("spec")
	errs = append(errs, validateReference(&s.ScaleTargetRef, true, p.Child("scaleTargetRef"))...)
	if s.MinReplicas != nil && *s.MinReplicas < 1 {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), *s.MinReplicas, "must be greater than or equal to 1"))
	}
	if s.MaxReplicas < 1 {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than 0"))
	}
	if s.MinReplicas != nil && s.MaxReplicas < *s.MinReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	for i := range s.Metrics {
		errs = append(errs, validateMetricSpec(&s.Metrics[i], p.Child("metrics").Index(i))...)
	}
	if b := s.Behavior; b != nil {
		errs = append(errs, validateRules(b.ScaleUp, p.Child("behavior", "scaleUp"))...)
		errs = append(errs, validateRules(b.ScaleDown, p.Child("behavior", "scaleDown"))...)
	}
	return errs
}

// ValidateHorizontalPodAutoscalerStatus checks a status write.
func ValidateHorizontalPodAutoscalerStatus(h, _ *HorizontalPodAutoscaler) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status")
	if h.Status.CurrentReplicas < 0 {
		errs = append(errs, field.Invalid(p.Child("currentReplicas"), h.Status.CurrentReplicas, "must be greater than or equal to 0"))
	}
	if h.Status.DesiredReplicas < 0 {
		errs = append(errs, field.Invalid(p.Child("desiredReplicas"), h.Status.DesiredReplicas, "must be greater than or equal to 0"))
	}
	return errs
}

func validateReference(r *CrossVersionObjectReference, requireName bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	} else {
		for _, msg := range pathSegmentName(r.Kind) {
			errs = append(errs, field.Invalid(p.Child("kind"), r.Kind, msg))
		}
	}
	if r.Name == "" {
		if requireName {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
	} else {
		for _, msg := range pathSegmentName(r.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), r.Name, msg))
		}
	}
	return errs
}

func validateMetricSpec(m *MetricSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	set := map[MetricSourceType]bool{
		ObjectMetricSourceType: m.Object != nil, PodsMetricSourceType: m.Pods != nil, ResourceMetricSourceType: m.Resource != nil,
		ContainerResourceMetricSourceType: m.ContainerResource != nil, ExternalMetricSourceType: m.External != nil,
	}
	types := []string{string(ContainerResourceMetricSourceType), string(ExternalMetricSourceType), string(ObjectMetricSourceType),
		string(PodsMetricSourceType), string(ResourceMetricSourceType)}
	n := 0
	for _, v := range set {
		if v {
			n++
		}
	}
	switch {
	case m.Type == "":
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric source type"))
	case !slices.Contains(types, string(m.Type)):
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, types))
	case !set[m.Type]:
		errs = append(errs, field.Required(p.Child(lowerFirst(string(m.Type))), "must populate information for the given metric source"))
	}
	if n > 1 || (n == 1 && m.Type != "" && !set[m.Type]) {
		errs = append(errs, field.Forbidden(p, "must populate the given metric source only"))
	}
	if r := m.Resource; r != nil {
		errs = append(errs, validateResourceSource(r.Name, &r.Target, p.Child("resource"))...)
	}
	if r := m.ContainerResource; r != nil {
		errs = append(errs, validateResourceSource(r.Name, &r.Target, p.Child("containerResource"))...)
		if r.Container == "" {
			errs = append(errs, field.Required(p.Child("containerResource", "container"), "must populate container name"))
		}
	}
	if o := m.Object; o != nil {
		errs = append(errs, validateReference(&o.DescribedObject, true, p.Child("object", "describedObject"))...)
		errs = append(errs, validateIdentifier(&o.Metric, p.Child("object", "metric"))...)
		errs = append(errs, validateTarget(&o.Target, p.Child("object", "target"))...)
		if o.Target.Value == nil && o.Target.AverageValue == nil {
			errs = append(errs, field.Required(p.Child("object", "target", "averageValue"), "must set either a target value or averageValue"))
		}
	}
	if o := m.Pods; o != nil {
		errs = append(errs, validateIdentifier(&o.Metric, p.Child("pods", "metric"))...)
		errs = append(errs, validateTarget(&o.Target, p.Child("pods", "target"))...)
		if o.Target.AverageValue == nil {
			errs = append(errs, field.Required(p.Child("pods", "target", "averageValue"), "must specify a positive target averageValue"))
		}
	}
	if o := m.External; o != nil {
		errs = append(errs, validateIdentifier(&o.Metric, p.Child("external", "metric"))...)
		errs = append(errs, validateTarget(&o.Target, p.Child("external", "target"))...)
		if o.Target.Value == nil && o.Target.AverageValue == nil {
			errs = append(errs, field.Required(p.Child("external", "target", "averageValue"), "must set either a target value for metric or a per-pod target"))
		}
	}
	return errs
}

func validateResourceSource(name any, t *MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if fmt.Sprint(name) == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	}
	errs = append(errs, validateTarget(t, p.Child("target"))...)
	if t.AverageUtilization == nil && t.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if t.AverageUtilization != nil && t.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("target", "averageValue"), "may not set both a target raw value and a target utilization"))
	}
	if t.Type == ValueMetricType {
		errs = append(errs, field.Invalid(p.Child("target", "type"), t.Type, "must be either Utilization or AverageValue"))
	}
	return errs
}

func validateIdentifier(m *MetricIdentifier, p *field.Path) field.ErrorList {
	if m.Name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "must specify a metric name")}
	}
	var errs field.ErrorList
	for _, msg := range pathSegmentName(m.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), m.Name, msg))
	}
	return errs
}

func validateTarget(t *MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	types := []string{string(AverageValueMetricType), string(UtilizationMetricType), string(ValueMetricType)}
	switch {
	case t.Type == "":
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	case !slices.Contains(types, string(t.Type)):
		errs = append(errs, field.NotSupported(p.Child("type"), t.Type, types))
	}
	positive := func(q *api.Quantity, name string) {
		if q == nil {
			return
		}
		if v, err := q.Float64(); err == nil && v <= 0 {
			errs = append(errs, field.Invalid(p.Child(name), q.S, "must be positive"))
		}
	}
	positive(t.Value, "value")
	positive(t.AverageValue, "averageValue")
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), *t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

func validateRules(r *HPAScalingRules, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil {
		if *w < 0 {
			errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, "must be greater than or equal to zero"))
		} else if *w > MaxStabilizationWindowSeconds {
			errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, fmt.Sprintf("must be less than or equal to %d", MaxStabilizationWindowSeconds)))
		}
	}
	if sp := r.SelectPolicy; sp != nil {
		valid := []string{string(DisabledPolicySelect), string(MaxChangePolicySelect), string(MinChangePolicySelect)}
		if !slices.Contains(valid, string(*sp)) {
			errs = append(errs, field.NotSupported(p.Child("selectPolicy"), *sp, valid))
		}
	}
	if len(r.Policies) == 0 {
		errs = append(errs, field.Required(p.Child("policies"), "must specify at least one Policy"))
	}
	for i, pol := range r.Policies {
		pp := p.Child("policies").Index(i)
		if pol.Type != PodsScalingPolicy && pol.Type != PercentScalingPolicy {
			errs = append(errs, field.NotSupported(pp.Child("type"), pol.Type, []string{string(PercentScalingPolicy), string(PodsScalingPolicy)}))
		}
		if pol.Value <= 0 {
			errs = append(errs, field.Invalid(pp.Child("value"), pol.Value, "must be greater than zero"))
		}
		if pol.PeriodSeconds <= 0 {
			errs = append(errs, field.Invalid(pp.Child("periodSeconds"), pol.PeriodSeconds, "must be greater than zero"))
		} else if pol.PeriodSeconds > MaxPeriodSeconds {
			errs = append(errs, field.Invalid(pp.Child("periodSeconds"), pol.PeriodSeconds, fmt.Sprintf("must be less than or equal to %d", MaxPeriodSeconds)))
		}
	}
	if t := r.Tolerance; t != nil {
		if v, err := t.Float64(); err == nil && v < 0 {
			errs = append(errs, field.Invalid(p.Child("tolerance"), t.S, "must be greater than or equal to 0"))
		}
	}
	return errs
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}

// pathSegmentName is Kubernetes' IsValidPathSegmentName: a name that can be
// one segment of a URL path.
func pathSegmentName(name string) []string {
	var msgs []string
	switch name {
	case ".", "..":
		msgs = append(msgs, fmt.Sprintf("may not be '%s'", name))
	}
	for _, c := range []string{"/", "%"} {
		if strings.Contains(name, c) {
			msgs = append(msgs, fmt.Sprintf("may not contain '%s'", c))
		}
	}
	return msgs
}
