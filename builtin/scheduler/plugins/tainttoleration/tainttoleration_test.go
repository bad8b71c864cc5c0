package tainttoleration

import (
	"context"
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/api"
)

func TestFilter(t *testing.T) {
	t.Parallel()
	gpu := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name        string
		taints      []corev1.Taint
		tolerations []corev1.Toleration
		want        *plugin.Status
	}{
		{name: "no taints"},
		{name: "untolerated", taints: []corev1.Taint{gpu}, want: plugin.NewStatus(plugin.UnschedulableAndUnresolvable, "node(s) had untolerated taint {dedicated: gpu}")},
		{name: "tolerated equal", taints: []corev1.Taint{gpu}, tolerations: []corev1.Toleration{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}},
		{name: "tolerated exists", taints: []corev1.Taint{gpu}, tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
		{name: "wrong value", taints: []corev1.Taint{gpu}, tolerations: []corev1.Toleration{{Key: "dedicated", Value: "cpu"}}, want: plugin.NewStatus(plugin.UnschedulableAndUnresolvable, "node(s) had untolerated taint {dedicated: gpu}")},
		{name: "prefer no schedule ignored", taints: []corev1.Taint{{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}}},
		{name: "no execute", taints: []corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoExecute}}, want: plugin.NewStatus(plugin.UnschedulableAndUnresolvable, "node(s) had untolerated taint {k: v}")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ni := plugin.NewNodeInfo()
			ni.SetNode(&corev1.Node{ObjectMeta: api.ObjectMeta{Name: "n"}, Spec: corev1.NodeSpec{Taints: tt.taints}})
			p := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: tt.tolerations}}
			if got := (TaintToleration{}).Filter(context.Background(), nil, p, ni); !got.Equal(tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestScore(t *testing.T) {
	t.Parallel()
	soft := corev1.Taint{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}
	scores := plugin.NodeScoreList{{Name: "a", Score: CountIntolerable([]corev1.Taint{soft, soft}, nil)}, {Name: "b", Score: CountIntolerable(nil, nil)}, {Name: "c", Score: CountIntolerable([]corev1.Taint{soft}, nil)}}
	(TaintToleration{}).NormalizeScore(context.Background(), nil, nil, scores)
	want := []int64{0, 100, 50}
	for i, s := range scores {
		if s.Score != want[i] {
			t.Errorf("%s: score %d, want %d", s.Name, s.Score, want[i])
		}
	}
}
