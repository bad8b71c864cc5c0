package v2

import "github.com/converge-dev/converge/framework/api"

// Default scaling rules (Kubernetes' autoscaling/v2 defaults).
const (
	defaultCPUUtilization       = 80
	scaleUpLimitPercent         = 100
	scaleUpLimitMinimumPods     = 4
	scaleUpPeriodSeconds        = 15
	scaleDownLimitPercent       = 100
	scaleDownPeriodSeconds      = 15
	scaleUpStabilizationSeconds = 0
)

// DefaultHorizontalPodAutoscaler sets minReplicas to 1, adds an 80% CPU
// utilization metric when there is none, and fills an explicit behavior's
// unset rules with the defaults. A scale-down rule without a stabilization
// window keeps it unset: the controller applies its own
// (--horizontal-pod-autoscaler-downscale-stabilization, 5 minutes).
func DefaultHorizontalPodAutoscaler(h *HorizontalPodAutoscaler) {
	if h.Spec.MinReplicas == nil {
		h.Spec.MinReplicas = api.Ptr(int32(1))
	}
	if len(h.Spec.Metrics) == 0 {
		h.Spec.Metrics = []MetricSpec{{Type: ResourceMetricSourceType, Resource: &ResourceMetricSource{
			Name: "cpu", Target: MetricTarget{Type: UtilizationMetricType, AverageUtilization: api.Ptr(int32(defaultCPUUtilization))},
		}}}
	}
	if b := h.Spec.Behavior; b != nil {
		DefaultBehavior(b)
	}
}

// DefaultBehavior fills the unset rules of b with the defaults: scale up by
// at most 4 pods or 100% (the larger) per 15 s without stabilization, scale
// down by at most 100% per 15 s.
func DefaultBehavior(b *HorizontalPodAutoscalerBehavior) {
	b.ScaleUp = withDefaults(b.ScaleUp, HPAScalingRules{
		StabilizationWindowSeconds: api.Ptr(int32(scaleUpStabilizationSeconds)),
		Policies: []HPAScalingPolicy{
			{Type: PodsScalingPolicy, Value: scaleUpLimitMinimumPods, PeriodSeconds: scaleUpPeriodSeconds},
			{Type: PercentScalingPolicy, Value: scaleUpLimitPercent, PeriodSeconds: scaleUpPeriodSeconds},
		},
	})
	b.ScaleDown = withDefaults(b.ScaleDown, HPAScalingRules{
		Policies: []HPAScalingPolicy{{Type: PercentScalingPolicy, Value: scaleDownLimitPercent, PeriodSeconds: scaleDownPeriodSeconds}},
	})
}

// withDefaults returns rules with every unset field taken from def.
func withDefaults(rules *HPAScalingRules, def HPAScalingRules) *HPAScalingRules {
	def.SelectPolicy = api.Ptr(MaxChangePolicySelect)
	if rules == nil {
		return &def
	}
	out := *rules
	if out.StabilizationWindowSeconds == nil {
		out.StabilizationWindowSeconds = def.StabilizationWindowSeconds
	}
	if out.SelectPolicy == nil {
		out.SelectPolicy = def.SelectPolicy
	}
	if len(out.Policies) == 0 {
		out.Policies = def.Policies
	}
	return &out
}
