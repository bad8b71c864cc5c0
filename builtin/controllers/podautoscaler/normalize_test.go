package podautoscaler

import (
	"testing"
	"time"

	autoscalingv2 "github.com/converge-dev/converge/builtin/api/autoscaling/v2"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

var testKey = client.ObjectKey{Namespace: "ns", Name: "hpa"}

func TestNormalizeWithoutBehavior(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                         string
		past                         []recommendation
		current, desired, minR, maxR int32
		want                         int32
		wantStabilized, wantLimited  bool
		wantReason                   string
	}{
		{name: "within range", current: 3, desired: 5, minR: 1, maxR: 10, want: 5, wantReason: "DesiredWithinRange"},
		{name: "scale-down waits for the window's highest recommendation", current: 5, desired: 2, minR: 1, maxR: 10,
			past: []recommendation{{at: testNow.Add(-time.Minute), replicas: 5}}, want: 5, wantStabilized: true, wantReason: "DesiredWithinRange"},
		{name: "recommendations older than the window are forgotten", current: 5, desired: 2, minR: 1, maxR: 10,
			past: []recommendation{{at: testNow.Add(-6 * time.Minute), replicas: 5}}, want: 2, wantReason: "DesiredWithinRange"},
		{name: "scale up at most doubles (at least 4)", current: 1, desired: 10, minR: 1, maxR: 20, want: 4, wantLimited: true, wantReason: "ScaleUpLimit"},
		{name: "max replicas", current: 10, desired: 30, minR: 1, maxR: 15, want: 15, wantLimited: true, wantReason: "TooManyReplicas"},
		{name: "min replicas", current: 3, desired: 1, minR: 2, maxR: 15, want: 2, wantLimited: true, wantReason: "TooFewReplicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHistory()
			h.recommendations[testKey] = tc.past
			got := h.normalize(testKey, testNow, 5*time.Minute, tc.current, tc.desired, tc.minR, tc.maxR)
			if got.replicas != tc.want || got.stabilized != tc.wantStabilized || got.limited != tc.wantLimited || got.limitReason != tc.wantReason {
				t.Errorf("normalize = %+v, want replicas %d stabilized %v limited %v reason %s", got, tc.want, tc.wantStabilized, tc.wantLimited, tc.wantReason)
			}
		})
	}
}

func TestNormalizeWithBehavior(t *testing.T) {
	t.Parallel()
	defaults := func(mutate func(b *autoscalingv2.HorizontalPodAutoscalerBehavior)) rules {
		h := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			MaxReplicas: 1, Metrics: []autoscalingv2.MetricSpec{{}}, Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{}}}
		if mutate != nil {
			mutate(h.Spec.Behavior)
		}
		autoscalingv2.DefaultHorizontalPodAutoscaler(h)
		r := (&reconciler{opts: Options{}.complete()}).rules(h)
		return r
	}
	percentDown := func(pct, period int32) func(b *autoscalingv2.HorizontalPodAutoscalerBehavior) {
		return func(b *autoscalingv2.HorizontalPodAutoscalerBehavior) {
			b.ScaleDown = &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: api.Ptr(int32(0)),
				Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: pct, PeriodSeconds: period}}}
		}
	}
	for _, tc := range []struct {
		name                         string
		rules                        rules
		past                         []recommendation
		up, down                     []scaleEvent
		current, desired, minR, maxR int32
		want                         int32
		wantReason                   string
		wantStabilized               bool
	}{
		{name: "default scale up: max of +4 pods and +100%", rules: defaults(nil), current: 2, desired: 10, minR: 1, maxR: 20,
			want: 6, wantReason: "ScaleUpLimit"},
		{name: "default scale up from 10: +100% wins", rules: defaults(nil), current: 10, desired: 50, minR: 1, maxR: 40,
			want: 20, wantReason: "ScaleUpLimit"},
		{name: "scale up this period already used counts", rules: defaults(nil), current: 6, desired: 20, minR: 1, maxR: 40,
			up: []scaleEvent{{at: testNow.Add(-5 * time.Second), change: 4}}, want: 6, wantReason: "ScaleUpLimit"},
		{name: "Min selects the smaller change", rules: defaults(func(b *autoscalingv2.HorizontalPodAutoscalerBehavior) {
			b.ScaleUp = &autoscalingv2.HPAScalingRules{SelectPolicy: api.Ptr(autoscalingv2.MinChangePolicySelect)}
		}), current: 10, desired: 50, minR: 1, maxR: 40, want: 14, wantReason: "ScaleUpLimit"},
		{name: "Disabled scale down keeps replicas", rules: defaults(func(b *autoscalingv2.HorizontalPodAutoscalerBehavior) {
			b.ScaleDown = &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: api.Ptr(int32(0)), SelectPolicy: api.Ptr(autoscalingv2.DisabledPolicySelect)}
		}), current: 5, desired: 1, minR: 1, maxR: 10, want: 5, wantReason: "ScaleDownLimit"},
		{name: "scale down limited by percent per period", rules: defaults(percentDown(50, 60)), current: 6, desired: 1, minR: 1, maxR: 10,
			down: []scaleEvent{{at: testNow.Add(-30 * time.Second), change: 2}}, want: 4, wantReason: "ScaleDownLimit"},
		{name: "scale down below min", rules: defaults(percentDown(100, 15)), current: 6, desired: 1, minR: 2, maxR: 10,
			want: 2, wantReason: "TooFewReplicas"},
		{name: "controller window applies to an unset scale-down window", rules: defaults(nil), current: 6, desired: 1, minR: 1, maxR: 10,
			past: []recommendation{{at: testNow.Add(-4 * time.Minute), replicas: 6}}, want: 6, wantReason: "DesiredWithinRange", wantStabilized: true},
		{name: "scale-up window takes the lowest recent recommendation", rules: defaults(func(b *autoscalingv2.HorizontalPodAutoscalerBehavior) {
			b.ScaleUp = &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: api.Ptr(int32(30))}
		}), current: 3, desired: 6, minR: 1, maxR: 10,
			past: []recommendation{{at: testNow.Add(-10 * time.Second), replicas: 4}}, want: 4, wantReason: "DesiredWithinRange", wantStabilized: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHistory()
			h.recommendations[testKey], h.up[testKey], h.down[testKey] = tc.past, tc.up, tc.down
			got := h.normalizeWithBehavior(testKey, testNow, tc.rules, tc.current, tc.desired, tc.minR, tc.maxR)
			if got.replicas != tc.want || got.limitReason != tc.wantReason || got.stabilized != tc.wantStabilized {
				t.Errorf("normalizeWithBehavior = %+v, want replicas %d reason %s stabilized %v", got, tc.want, tc.wantReason, tc.wantStabilized)
			}
		})
	}
}
