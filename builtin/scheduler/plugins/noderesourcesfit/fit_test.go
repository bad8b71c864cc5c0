package noderesourcesfit

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/api"
)

func node(cpu, mem, pods string, extra ...string) *corev1.Node {
	rl := corev1.ResourceList{"cpu": api.MustParseQuantity(cpu), "memory": api.MustParseQuantity(mem), "pods": api.MustParseQuantity(pods)}
	for i := 0; i+1 < len(extra); i += 2 {
		rl[extra[i]] = api.MustParseQuantity(extra[i+1])
	}
	n := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: "n"}}
	n.Status.Allocatable = rl
	return n
}

func pod(kv ...string) *corev1.Pod {
	rl := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		rl[kv[i]] = api.MustParseQuantity(kv[i+1])
	}
	return &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: "p", UID: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: rl}}}}}
}

func TestFilter(t *testing.T) {
	t.Parallel()
	existing := pod("cpu", "1", "memory", "1Gi")
	existing.UID = "existing"
	tests := []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		args Args
		want *plugin.Status
	}{
		{name: "fits", pod: pod("cpu", "1"), node: node("2", "2Gi", "10")},
		{name: "best effort fits", pod: pod(), node: node("1", "1Gi", "10")},
		{name: "insufficient cpu", pod: pod("cpu", "1500m"), node: node("2", "2Gi", "10"), want: plugin.NewStatus(plugin.Unschedulable, "Insufficient cpu")},
		{name: "insufficient cpu and memory", pod: pod("cpu", "2", "memory", "2Gi"), node: node("2", "2Gi", "10"), want: plugin.NewStatus(plugin.Unschedulable, "Insufficient cpu", "Insufficient memory")},
		{name: "larger than node is unresolvable", pod: pod("cpu", "3"), node: node("2", "2Gi", "10"), want: plugin.NewStatus(plugin.UnschedulableAndUnresolvable, "Insufficient cpu")},
		{name: "too many pods", pod: pod(), node: node("2", "2Gi", "1"), want: plugin.NewStatus(plugin.Unschedulable, "Too many pods")},
		{name: "extended resource", pod: pod("example.com/gpu", "1"), node: node("2", "2Gi", "10"), want: plugin.NewStatus(plugin.UnschedulableAndUnresolvable, "Insufficient example.com/gpu")},
		{name: "extended resource available", pod: pod("example.com/gpu", "1"), node: node("2", "2Gi", "10", "example.com/gpu", "2")},
		{name: "ignored extended resource", pod: pod("example.com/gpu", "1"), node: node("2", "2Gi", "10"), args: Args{IgnoredResourceGroups: []string{"example.com"}}},
		{name: "ephemeral storage", pod: pod("ephemeral-storage", "2Gi"), node: node("2", "2Gi", "10", "ephemeral-storage", "1500Mi"), want: plugin.NewStatus(plugin.UnschedulableAndUnresolvable, "Insufficient ephemeral-storage")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := NewWithArgs(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			ni := plugin.NewNodeInfo(existing)
			ni.SetNode(tt.node)
			state := plugin.NewCycleState()
			f.PreFilter(context.Background(), state, tt.pod, nil)
			got := f.Filter(context.Background(), state, tt.pod, ni)
			if !got.Equal(tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		strategy ScoringStrategy
		want     int64
	}{
		// Node 4 cpu / 8Gi, used 1 cpu / 2Gi, pod 1 cpu / 2Gi: 50 % used.
		{name: "least allocated", strategy: ScoringStrategy{Type: LeastAllocated}, want: 50},
		{name: "most allocated", strategy: ScoringStrategy{Type: MostAllocated}, want: 50},
		{name: "requested to capacity ratio", strategy: ScoringStrategy{Type: RequestedToCapacityRatio, RequestedToCapacityRatio: &RequestedToCapacityRatioParam{Shape: []UtilizationShapePoint{{0, 10}, {100, 0}}}}, want: 50},
		{name: "cpu weighted", strategy: ScoringStrategy{Type: MostAllocated, Resources: []ResourceSpec{{Name: "cpu", Weight: 3}, {Name: "memory", Weight: 1}}}, want: 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := tt.strategy
			f, err := NewWithArgs(Args{ScoringStrategy: &s})
			if err != nil {
				t.Fatal(err)
			}
			existing := pod("cpu", "1", "memory", "2Gi")
			ni := plugin.NewNodeInfo(existing)
			ni.SetNode(node("4", "8Gi", "10"))
			p := pod("cpu", "1", "memory", "2Gi")
			state := plugin.NewCycleState()
			f.PreScore(context.Background(), state, p, nil)
			got, st := f.Score(context.Background(), state, p, ni)
			if !st.IsSuccess() {
				t.Fatal(st)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Score (-want +got):\n%s", diff)
			}
		})
	}
}

func TestArgsValidation(t *testing.T) {
	t.Parallel()
	if _, err := New(context.Background(), []byte(`{"scoringStrategy":{"type":"Nope"}}`), nil); err == nil {
		t.Error("want error for unknown strategy")
	}
	if _, err := New(context.Background(), []byte(`{"scoringStrategy":{"type":"MostAllocated"}}`), nil); err != nil {
		t.Error(err)
	}
}
