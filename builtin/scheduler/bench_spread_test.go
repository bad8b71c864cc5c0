package scheduler_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
)

// spreadPod is a pod of group g that must spread over zones with maxSkew 1
// and must not share a node with another pod of its group.
func spreadPod(ns, name string, g int) *corev1.Pod {
	group := fmt.Sprintf("g%d", g)
	sel := &api.LabelSelector{MatchLabels: map[string]string{"group": group}}
	p := benchPod(ns, name, "", "")
	p.Labels = map[string]string{"group": group}
	p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel,
	}}
	p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{LabelSelector: sel, TopologyKey: "kubernetes.io/hostname"}},
	}}
	return p
}

// BenchmarkSchedulingSpreadAntiAffinity schedules pods with a
// PodTopologySpread constraint (maxSkew 1 over 3 zones, DoNotSchedule) and a
// required inter-pod anti-affinity on hostname, both against the pods of their
// own group, on 1,000 simulated nodes through the real API server: 4 groups
// of 500 pods, created 32 at a time. It reports pods bound per second from
// the first create to the last bind and the process CPU per pod, and checks
// the placement (at most one pod of a group per node, zone counts of a group
// within 1).
//
//	go test ./builtin/scheduler/ -run '^$' -bench SchedulingSpreadAntiAffinity -benchtime 1x
//
// BENCH_SPREAD_NODES and BENCH_SPREAD_PODS change the sizes (pods are split
// over 4 groups and must be at most 4 × nodes); BENCH_CPUPROFILE=file writes a
// CPU profile of the measured phase.
func BenchmarkSchedulingSpreadAntiAffinity(b *testing.B) {
	const groups, zones = 4, 3
	numNodes, numPods := benchSize("BENCH_SPREAD_NODES", 1000), benchSize("BENCH_SPREAD_PODS", 2000)
	if numPods > groups*numNodes {
		b.Fatalf("%d pods do not fit on %d nodes with one pod per group and node", numPods, numNodes)
	}
	ctx := b.Context()
	c := startBenchEnv(b)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: "bench-spread"}}); err != nil {
		b.Fatal(err)
	}
	parallel(b, numNodes, func(i int) error {
		n := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("node-%d", i), Labels: map[string]string{
			"kubernetes.io/hostname": fmt.Sprintf("node-%d", i), "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%zones),
		}}}
		alloc := corev1.ResourceList{"cpu": api.MustParseQuantity("4"), "memory": api.MustParseQuantity("32Gi"), "pods": api.MustParseQuantity("110")}
		if err := c.Create(ctx, n); err != nil {
			return err
		}
		n.Status.Allocatable, n.Status.Capacity = alloc, alloc
		return c.Status().Update(ctx, n)
	})

	informers := cache.NewSharedInformers(c)
	watchInf, err := cache.InformerFor(informers, cache.InformerOptions[*corev1.Pod]{})
	if err != nil {
		b.Fatal(err)
	}
	bound := &boundCounter{ns: "bench-spread", target: int64(numPods), done: make(chan time.Time, 1)}
	watchInf.AddHandler(bound.handle)
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	go func() { _ = informers.Start(wctx) }()
	if !watchInf.WaitForCacheSync(ctx) {
		b.Fatal("watch not synced")
	}

	b.ResetTimer()
	for range b.N {
		sctx, scancel := context.WithCancel(ctx)
		s, err := scheduler.New(sctx, c, cache.NewSharedInformers(c), scheduler.Options{Logger: logr.Discard()})
		if err != nil {
			b.Fatal(err)
		}
		sdone := make(chan error, 1)
		go func() { sdone <- s.Start(sctx) }()
		for s.Cache().NodeCount() < numNodes {
			time.Sleep(10 * time.Millisecond)
		}
		stopProfile := startProfile(b, os.Getenv("BENCH_CPUPROFILE"))
		start, cpu0 := time.Now(), cpuTime()
		parallel(b, numPods, func(i int) error {
			return c.Create(ctx, spreadPod("bench-spread", fmt.Sprintf("s-%d", i), i%groups))
		})
		var end time.Time
		select {
		case end = <-bound.done:
		case <-time.After(5 * time.Minute):
			active, backoff, parked := s.Queue().Lens()
			b.Fatalf("only %d of %d pods bound; stats %+v; queue active %d backoff %d unschedulable %d", bound.count.Load(), numPods, s.Stats(), active, backoff, parked)
		}
		rate := float64(numPods) / end.Sub(start).Seconds()
		cpuPerPod := float64((cpuTime() - cpu0).Microseconds()) / 1000 / float64(numPods)
		stopProfile()
		scancel()
		<-sdone
		checkSpread(b, watchInf.Store().List(), groups)
		b.ReportMetric(rate, "pods/s")
		b.ReportMetric(cpuPerPod, "cpu-ms/pod")
		b.Logf("%d pods in %d groups on %d nodes bound after %v (%.0f pods/s, %.2f cpu-ms/pod); stats %+v", numPods, groups, numNodes, end.Sub(start), rate, cpuPerPod, s.Stats())
	}
}

// checkSpread fails unless every node has at most one pod of each group and
// each group's per-zone counts differ by at most one.
func checkSpread(b *testing.B, pods []*corev1.Pod, groups int) {
	b.Helper()
	perNode := map[string]int{}
	perZone := make([]map[string]int, groups)
	for g := range perZone {
		perZone[g] = map[string]int{}
	}
	for _, p := range pods {
		if p.Namespace != "bench-spread" || p.Spec.NodeName == "" {
			continue
		}
		var g, n int
		if _, err := fmt.Sscanf(p.Labels["group"], "g%d", &g); err != nil || g < 0 || g >= groups {
			b.Fatalf("pod %s has group label %q", p.Name, p.Labels["group"])
		}
		if perNode[p.Labels["group"]+"/"+p.Spec.NodeName]++; perNode[p.Labels["group"]+"/"+p.Spec.NodeName] > 1 {
			b.Fatalf("two pods of group %d on node %s", g, p.Spec.NodeName)
		}
		if _, err := fmt.Sscanf(p.Spec.NodeName, "node-%d", &n); err != nil {
			b.Fatalf("pod %s on unexpected node %q", p.Name, p.Spec.NodeName)
		}
		perZone[g][fmt.Sprintf("zone-%d", n%3)]++
	}
	for g, zs := range perZone {
		lo, hi := -1, 0
		for _, z := range []string{"zone-0", "zone-1", "zone-2"} {
			if lo < 0 || zs[z] < lo {
				lo = zs[z]
			}
			hi = max(hi, zs[z])
		}
		if hi-lo > 1 {
			b.Fatalf("group %d is spread %v over zones (skew %d > 1)", g, zs, hi-lo)
		}
	}
}
