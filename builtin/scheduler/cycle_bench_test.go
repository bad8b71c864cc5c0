package scheduler

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/api"
)

// BenchmarkSchedulingCycle measures the scheduler's own CPU per pod: the
// scheduling cycle (snapshot, PreFilter, Filter, PreScore, Score, select,
// assume, Reserve, Permit) of SchedulingBasic-like pods on 5,000 nodes with
// 1,000 pods placed, without an API server. Assumed pods are forgotten every
// 10,000 pods so that the cluster stays the same size.
//
//	go test ./builtin/scheduler/ -run '^$' -bench SchedulingCycle -benchmem
func BenchmarkSchedulingCycle(b *testing.B) {
	for _, tc := range []struct {
		name  string
		nodes int
	}{{"nodes=5000", 5000}, {"nodes=500", 500}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			s, err := New(ctx, nil, nil, Options{})
			if err != nil {
				b.Fatal(err)
			}
			alloc := corev1.ResourceList{"cpu": api.MustParseQuantity("4"), "memory": api.MustParseQuantity("32Gi"), "pods": api.MustParseQuantity("110")}
			for i := range tc.nodes {
				s.cache.AddNode(&corev1.Node{
					ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("node-%d", i), Labels: map[string]string{
						"kubernetes.io/hostname": fmt.Sprintf("node-%d", i), "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3),
					}},
					Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc},
				})
			}
			for i := range 1000 {
				p := cycleBenchPod(fmt.Sprintf("init-%d", i))
				p.Spec.NodeName = fmt.Sprintf("node-%d", i%tc.nodes)
				s.cache.AddPod(p)
			}
			fwk := s.profiles["default-scheduler"]
			pods := make([]*plugin.PodInfo, 10000)
			for i := range pods {
				pods[i], _ = plugin.NewPodInfo(cycleBenchPod(fmt.Sprintf("p-%d", i)))
			}
			var assumed []*corev1.Pod
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for i := range b.N {
				if len(assumed) == len(pods) {
					b.StopTimer()
					for _, p := range assumed {
						_ = s.cache.ForgetPod(p)
					}
					assumed = assumed[:0]
					b.StartTimer()
				}
				pi := pods[i%len(pods)]
				pod := pi.Pod
				state := plugin.NewCycleState()
				state.SetPodInfo(pi)
				s.cache.UpdateSnapshot(s.snapshot)
				host, err := s.schedulePod(ctx, fwk, state, pod)
				if err != nil {
					b.Fatal(err)
				}
				a := *pod
				a.Spec.NodeName = host
				if err := s.cache.AssumePod(&a); err != nil {
					b.Fatal(err)
				}
				if st := fwk.RunReservePluginsReserve(ctx, state, &a, host); !st.IsSuccess() {
					b.Fatal(st.AsError())
				}
				if st := fwk.RunPermitPlugins(ctx, state, &a, host); !st.IsSuccess() {
					b.Fatal(st.AsError())
				}
				assumed = append(assumed, &a)
			}
			// CPU time, unlike ns/op, does not count waiting for a core on a
			// busy machine.
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU returns the user+system CPU time of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func cycleBenchPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: api.ObjectMeta{Namespace: "bench", Name: name, UID: "uid-" + name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"cpu": api.MustParseQuantity("100m"), "memory": api.MustParseQuantity("500Mi")},
			}}},
		},
	}
}
