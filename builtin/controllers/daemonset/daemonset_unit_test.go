package daemonset

import (
	"testing"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

func TestNodePlacement(t *testing.T) {
	t.Parallel()
	node := func(lbls map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: api.ObjectMeta{Name: "n1", Labels: lbls}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	affinity := func(reqs ...corev1.NodeSelectorRequirement) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}}}}}
	}
	req := func(key string, op corev1.NodeSelectorOperator, vals ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: vals}
	}
	for name, tc := range map[string]struct {
		spec                  corev1.PodSpec
		node                  *corev1.Node
		wantRun, wantContinue bool
	}{
		"no constraints":                  {corev1.PodSpec{}, node(nil), true, true},
		"nodeSelector match":              {corev1.PodSpec{NodeSelector: map[string]string{"a": "b"}}, node(map[string]string{"a": "b"}), true, true},
		"nodeSelector mismatch":           {corev1.PodSpec{NodeSelector: map[string]string{"a": "b"}}, node(map[string]string{"a": "c"}), false, false},
		"In":                              {corev1.PodSpec{Affinity: affinity(req("z", corev1.NodeSelectorOpIn, "x", "y"))}, node(map[string]string{"z": "y"}), true, true},
		"NotIn":                           {corev1.PodSpec{Affinity: affinity(req("z", corev1.NodeSelectorOpNotIn, "y"))}, node(map[string]string{"z": "y"}), false, false},
		"Exists":                          {corev1.PodSpec{Affinity: affinity(req("z", corev1.NodeSelectorOpExists))}, node(nil), false, false},
		"DoesNotExist":                    {corev1.PodSpec{Affinity: affinity(req("z", corev1.NodeSelectorOpDoesNotExist))}, node(nil), true, true},
		"Gt":                              {corev1.PodSpec{Affinity: affinity(req("cpu", corev1.NodeSelectorOpGt, "4"))}, node(map[string]string{"cpu": "8"}), true, true},
		"Lt":                              {corev1.PodSpec{Affinity: affinity(req("cpu", corev1.NodeSelectorOpLt, "4"))}, node(map[string]string{"cpu": "8"}), false, false},
		"NoSchedule untolerated":          {corev1.PodSpec{}, node(nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule}), false, true},
		"NoExecute untolerated":           {corev1.PodSpec{}, node(nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoExecute}), false, false},
		"PreferNoSchedule":                {corev1.PodSpec{}, node(nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectPreferNoSchedule}), true, true},
		"tolerated by Equal":              {corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v"}}}, node(nil, corev1.Taint{Key: "k", Value: "v", Effect: corev1.TaintEffectNoExecute}), true, true},
		"default memory-pressure":         {corev1.PodSpec{}, node(nil, corev1.Taint{Key: taintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}), true, true},
		"network-unavailable":             {corev1.PodSpec{}, node(nil, corev1.Taint{Key: taintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}), false, true},
		"network-unavailable hostNetwork": {corev1.PodSpec{HostNetwork: true}, node(nil, corev1.Taint{Key: taintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}), true, true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			spec := tc.spec
			daemonTolerations(&spec)
			run, cont := nodePlacement(&spec, tc.node)
			if run != tc.wantRun || cont != tc.wantContinue {
				t.Errorf("nodePlacement = %v, %v; want %v, %v", run, cont, tc.wantRun, tc.wantContinue)
			}
		})
	}
}

func TestRollingLimits(t *testing.T) {
	t.Parallel()
	ds := func(surge, unavail *api.IntOrString) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
			Type: appsv1.RollingUpdateDaemonSetStrategyType, RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxSurge: surge, MaxUnavailable: unavail}}}}
	}
	for name, tc := range map[string]struct {
		ds                 *appsv1.DaemonSet
		surge, unavailable int
	}{
		"defaults":          {&appsv1.DaemonSet{}, 0, 1},
		"percent rounds up": {ds(nil, api.Ptr(api.FromString("25%"))), 0, 3},
		"surge":             {ds(api.Ptr(api.FromString("10%")), api.Ptr(api.FromInt(0))), 1, 0},
		"both zero":         {ds(api.Ptr(api.FromInt(0)), api.Ptr(api.FromInt(0))), 0, 1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, u := rollingLimits(tc.ds, 10)
			if s != tc.surge || u != tc.unavailable {
				t.Errorf("rollingLimits = %d, %d; want %d, %d", s, u, tc.surge, tc.unavailable)
			}
		})
	}
}
