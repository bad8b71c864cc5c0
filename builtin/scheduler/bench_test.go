package scheduler_test

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

// Sizes of the SchedulingBasic workload (scheduler_perf's 5000Nodes case);
// override with BENCH_NODES/BENCH_INIT_PODS/BENCH_PODS for quicker runs.
func benchSize(name string, def int) int {
	var v int
	if s := os.Getenv(name); s != "" {
		if _, err := fmt.Sscan(s, &v); err == nil && v > 0 {
			return v
		}
	}
	return def
}

const benchWorkers = 32

// parallel runs fn(i) for i in [0, n) on benchWorkers goroutines.
func parallel(b *testing.B, n int, fn func(i int) error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for w := 0; w < benchWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		b.Fatal(err)
	}
}

func benchPod(ns, name, schedulerName, nodeName string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			SchedulerName: schedulerName, NodeName: nodeName,
			Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"cpu": api.MustParseQuantity("100m"), "memory": api.MustParseQuantity("500Mi")},
			}}},
		},
	}
}

// boundCounter counts pods of a namespace observed with spec.nodeName set and
// records when the n-th one arrived.
type boundCounter struct {
	ns     string
	target int64
	count  atomic.Int64
	seen   sync.Map
	done   chan time.Time
}

func (bc *boundCounter) handle(e cache.Event[*corev1.Pod]) {
	p := e.Object
	if p.Namespace != bc.ns || p.Spec.NodeName == "" || e.Type == cache.Deleted {
		return
	}
	if _, loaded := bc.seen.LoadOrStore(p.Name, struct{}{}); loaded {
		return
	}
	if bc.count.Add(1) == bc.target {
		bc.done <- time.Now()
	}
}

// BenchmarkSchedulingBasic is scheduler_perf's SchedulingBasic through the
// real API server: 5000 nodes, 1000 pods already placed, 10000 pods to
// schedule. It reports the scheduler's throughput (pods bound per second from
// the first create to the last bind, counted by a watch) and, in the same
// run, a bind-only baseline that creates the same number of pods and binds
// them round-robin through pods/binding as fast as the write path allows.
//
//	go test ./builtin/scheduler/ -run '^$' -bench SchedulingBasic -benchtime 1x
//
// BENCH_CPUPROFILE=file writes a CPU profile of the scheduler phase,
// BENCH_BASELINE_CPUPROFILE=file one of the baseline phase.
func BenchmarkSchedulingBasic(b *testing.B) {
	numNodes, initPods, numPods := benchSize("BENCH_NODES", 5000), benchSize("BENCH_INIT_PODS", 1000), benchSize("BENCH_PODS", 10000)
	ctx := b.Context()
	c := startBenchEnv(b)
	for _, ns := range []string{"bench-init", "bench-baseline", "bench-sched"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}}); err != nil {
			b.Fatal(err)
		}
	}

	t0 := time.Now()
	parallel(b, numNodes, func(i int) error {
		n := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("node-%d", i), Labels: map[string]string{
			"kubernetes.io/hostname": fmt.Sprintf("node-%d", i), "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3),
		}}}
		alloc := corev1.ResourceList{"cpu": api.MustParseQuantity("4"), "memory": api.MustParseQuantity("32Gi"), "pods": api.MustParseQuantity("110")}
		if err := c.Create(ctx, n); err != nil {
			return err
		}
		n.Status.Allocatable, n.Status.Capacity = alloc, alloc
		return c.Status().Update(ctx, n)
	})
	b.Logf("created %d nodes in %v", numNodes, time.Since(t0))
	t0 = time.Now()
	parallel(b, initPods, func(i int) error {
		return c.Create(ctx, benchPod("bench-init", fmt.Sprintf("init-%d", i), "", fmt.Sprintf("node-%d", i%numNodes)))
	})
	b.Logf("created %d placed pods in %v", initPods, time.Since(t0))

	// Watch that counts bound pods of both phases.
	informers := cache.NewSharedInformers(c)
	watchInf, err := cache.InformerFor(informers, cache.InformerOptions[*corev1.Pod]{})
	if err != nil {
		b.Fatal(err)
	}
	baseline := &boundCounter{ns: "bench-baseline", target: int64(numPods), done: make(chan time.Time, 1)}
	sched := &boundCounter{ns: "bench-sched", target: int64(numPods), done: make(chan time.Time, 1)}
	watchInf.AddHandler(baseline.handle)
	watchInf.AddHandler(sched.handle)
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	go func() { _ = informers.Start(wctx) }()
	if !watchInf.WaitForCacheSync(ctx) {
		b.Fatal("watch not synced")
	}

	b.ResetTimer()
	for range b.N {
		// Phase 1: bind-only baseline. Creators feed binders; pods use a
		// scheduler name no profile serves, so the scheduler ignores them.
		stopBaseProfile := startProfile(b, os.Getenv("BENCH_BASELINE_CPUPROFILE"))
		start, cpu0 := time.Now(), cpuTime()
		toBind := make(chan *corev1.Pod, numPods)
		var bwg sync.WaitGroup
		var bindErrs atomic.Int64
		for w := 0; w < benchWorkers; w++ {
			bwg.Add(1)
			go func() {
				defer bwg.Done()
				for p := range toBind {
					node := fmt.Sprintf("node-%d", hashIndex(p.Name, numNodes))
					err := c.SubResource("binding").Create(ctx, p, &corev1.Binding{
						ObjectMeta: api.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID},
						Target:     corev1.ObjectReference{Kind: "Node", Name: node},
					})
					if err != nil {
						bindErrs.Add(1)
					}
				}
			}()
		}
		parallel(b, numPods, func(i int) error {
			p := benchPod("bench-baseline", fmt.Sprintf("b-%d", i), "bench-baseline", "")
			if err := c.Create(ctx, p); err != nil {
				return err
			}
			toBind <- p
			return nil
		})
		close(toBind)
		bwg.Wait()
		var baseEnd time.Time
		select {
		case baseEnd = <-baseline.done:
		case <-time.After(time.Minute):
			b.Fatalf("baseline: only %d of %d pods observed bound (%d bind errors)", baseline.count.Load(), numPods, bindErrs.Load())
		}
		baseDur := baseEnd.Sub(start)
		baseRate := float64(numPods) / baseDur.Seconds()
		// CPU of the whole process (API server, etcd, creators, watch and,
		// in phase 2, the scheduler) per pod, up to the end of the phase.
		baseCPU := float64((cpuTime() - cpu0).Microseconds()) / 1000 / float64(numPods)
		stopBaseProfile()

		// Phase 2: the scheduler.
		sctx, scancel := context.WithCancel(ctx)
		s, err := scheduler.New(sctx, c, cache.NewSharedInformers(c), scheduler.Options{Logger: funcr.New(func(prefix, args string) { b.Log(prefix, args) }, funcr.Options{})})
		if err != nil {
			b.Fatal(err)
		}
		sdone := make(chan error, 1)
		go func() { sdone <- s.Start(sctx) }()
		for s.Cache().NodeCount() < numNodes || s.Cache().PodCount() < initPods {
			time.Sleep(10 * time.Millisecond)
		}
		stopProfile := startProfile(b, os.Getenv("BENCH_CPUPROFILE"))
		start, cpu0 = time.Now(), cpuTime()
		parallel(b, numPods, func(i int) error {
			return c.Create(ctx, benchPod("bench-sched", fmt.Sprintf("s-%d", i), "", ""))
		})
		createdIn := time.Since(start)
		var schedEnd time.Time
		select {
		case schedEnd = <-sched.done:
		case <-time.After(5 * time.Minute):
			b.Fatalf("scheduler: only %d of %d pods bound; stats %+v", sched.count.Load(), numPods, s.Stats())
		}
		schedRate := float64(numPods) / schedEnd.Sub(start).Seconds()
		schedCPU := float64((cpuTime() - cpu0).Microseconds()) / 1000 / float64(numPods)
		stopProfile()
		var events corev1.EventList
		if err := c.List(ctx, &events, client.InNamespace("bench-sched")); err != nil {
			b.Fatal(err)
		}
		scancel()
		<-sdone
		b.ReportMetric(schedRate, "pods/s")
		b.ReportMetric(baseRate, "baseline-pods/s")
		b.ReportMetric(schedRate/baseRate, "ratio")
		b.ReportMetric(schedCPU, "cpu-ms/pod")
		b.ReportMetric(baseCPU, "baseline-cpu-ms/pod")
		b.Logf("baseline: %d pods created+bound in %v (%.0f pods/s, %.2f cpu-ms/pod, %d bind errors)", numPods, baseDur, baseRate, baseCPU, bindErrs.Load())
		b.Logf("scheduler: %d pods created in %v, all bound after %v (%.0f pods/s, %.2f cpu-ms/pod, %d events written by then); stats %+v", numPods, createdIn, schedEnd.Sub(start), schedRate, schedCPU, len(events.Items), s.Stats())
	}
}

// startProfile starts a CPU profile into file ("": none) and returns the
// function that stops it.
func startProfile(b *testing.B, file string) func() {
	b.Helper()
	if file == "" {
		return func() {}
	}
	out, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		b.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); _ = out.Close() }
}

// cpuTime returns the user+system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func hashIndex(s string, n int) int {
	var h uint32 = 2166136261
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return int(h % uint32(n))
}

// startBenchEnv starts a control plane without controllers, stopped when b
// ends, and returns a client of it.
func startBenchEnv(b *testing.B) *client.Client {
	b.Helper()
	env := testenv.StartT(b, testenv.Options{})
	sch, err := all.NewScheme()
	if err != nil {
		b.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	if err != nil {
		b.Fatal(err)
	}
	return c
}
