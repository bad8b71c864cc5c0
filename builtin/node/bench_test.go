package node_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/cri/containerd"
	"github.com/converge-dev/converge/builtin/node/cri/containerd/daemon"
	"github.com/converge-dev/converge/builtin/node/cri/process"
	"github.com/converge-dev/converge/builtin/node/cri/runtimetest"
	"github.com/converge-dev/converge/builtin/node/image"
	"github.com/converge-dev/converge/builtin/node/podnet"
	"github.com/converge-dev/converge/framework/api/fields"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

// BenchmarkPodStartup measures pod startup latency on the process runtime
// and, side by side, on containerd (a private daemon, CNI pod networking, the
// image present): from the create request until a watch
// (spec.nodeName=<node>) sees the pod Running. Pods are created and bound one
// after another, 10 at a time in flight. Reports p50/p99 in milliseconds
// (goals: p99 ≤ 1 s on the process runtime, ≤ 2 s on containerd for 50 pods)
// and the pod writes the watch saw per pod up to Running (its create, then
// the agent's status patches).
//
//	go test ./builtin/node -run '^$' -bench PodStartup -benchtime 200x
//	go test ./builtin/node -run '^$' -bench PodStartup/containerd -benchtime 50x
//
// BENCH_NODE and BENCH_POD_CIDR choose the node (its bridge) and the pod
// CIDR, BENCH_SHIM_GROUPS containerd.Options.ShimGroups, BENCH_PODNET the pod
// network; BENCH_WINDOW=1 logs the burst's start and end (Unix ns) for
// hack/podstart-cpu.sh, BENCH_CPUPROFILE=FILE a CPU profile of the test
// process (agent, API server, etcd) within the burst.
func BenchmarkPodStartup(b *testing.B) {
	b.Run("process", func(b *testing.B) {
		helper := runtimetest.BuildHelper(b)
		podStartup(b, node.Options{Runtime: process.New(process.Options{}), PodCIDR: "127.88.0.0/16"},
			corev1.Container{Name: "c", Image: "local/helper", Command: []string{helper, "sleep", "forever"}})
	})
	b.Run("containerd", func(b *testing.B) {
		dir, err := os.MkdirTemp("", "cvb-") // short: containerd's socket lives below it
		if err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dir)
		ctx, stop := context.WithCancel(context.Background())
		d, err := daemon.Start(ctx, daemon.Options{Dir: filepath.Join(dir, "ctd")})
		if err != nil {
			b.Fatalf("containerd is required (apt-get install containerd runc): %v", err)
		}
		defer func() { stop(); <-d.Done() }()
		groups, _ := strconv.Atoi(os.Getenv("BENCH_SHIM_GROUPS")) // -1: a shim per container
		rt, err := containerd.New(ctx, containerd.Options{Address: d.Address(), ShimGroups: groups})
		if err != nil {
			b.Fatal(err)
		}
		defer rt.Close()
		var archive bytes.Buffer
		if _, err := image.Build(ctx, image.BuildOptions{Binary: "/bin/busybox", Name: "bench/busybox:v1", Out: &archive}); err != nil {
			b.Fatalf("build the busybox image (apt-get install busybox-static): %v", err)
		}
		if _, err := image.Import(ctx, rt.Client(), &archive); err != nil {
			b.Fatal(err)
		}
		// The node goes for good: its masquerade rule and bridge too (a
		// bridge left with this pod CIDR's gateway would be replaced by the
		// next node of this name with another CIDR, but not leaked meanwhile).
		defer func() {
			if err := podnet.RemoveBridge(benchNode()); err != nil {
				b.Logf("remove the bench node's bridge: %v", err)
			}
			_ = podnet.RemoveMasquerade(benchNode())
		}()
		podStartup(b, node.Options{Runtime: rt, PodCIDR: cmp.Or(os.Getenv("BENCH_POD_CIDR"), "10.87.0.0/22"), PodNetwork: os.Getenv("BENCH_PODNET")},
			corev1.Container{Name: "c", Image: "bench/busybox:v1", ImagePullPolicy: corev1.PullNever,
				Command: []string{"/bin/busybox", "sleep", "3600"}})
	})
}

// benchNode is the benchmark's node name (BENCH_NODE, default "bench"): it
// names the node's pod bridge, so two runs on one machine can use two (with
// BENCH_POD_CIDR for two address ranges).
func benchNode() string { return cmp.Or(os.Getenv("BENCH_NODE"), "bench") }

// podStartup runs the startup benchmark on an agent made from opts, with pods
// of one container ctr.
func podStartup(b *testing.B, opts node.Options, ctr corev1.Container) {
	env := testenv.StartT(b, testenv.Options{})
	sch, err := all.NewScheme()
	if err != nil {
		b.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	if err != nil {
		b.Fatal(err)
	}
	nodeName := benchNode()
	opts.NodeName, opts.Config, opts.RootDir = nodeName, &client.Config{Host: env.URL}, filepath.Join(env.Dir, "node")
	agent, err := node.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan error, 1)
	go func() { done <- agent.Start(ctx) }()
	defer func() { cancel(); <-done }()

	var mu sync.Mutex
	created := map[string]time.Time{}
	var lat []time.Duration
	running := map[string]bool{}
	writes := 0 // pod writes seen by the watch from each create to its Running
	w, err := c.Watch(ctx, &corev1.PodList{}, client.InNamespace("default"),
		&client.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", nodeName)})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	allRunning := make(chan struct{})
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if p.Status.Phase != corev1.PodRunning {
				mu.Lock()
				if _, ok := created[p.Name]; ok && !running[p.Name] {
					writes++ // the create and each status write before Running
				}
				mu.Unlock()
				continue
			}
			now := time.Now()
			mu.Lock()
			if t0, ok := created[p.Name]; ok && !running[p.Name] {
				writes++
				running[p.Name] = true
				lat = append(lat, now.Sub(t0))
				if len(lat) == b.N {
					close(allRunning)
				}
			}
			mu.Unlock()
		}
	}()
	sem := make(chan struct{}, 10)
	if path := os.Getenv("BENCH_CPUPROFILE"); path != "" { // the test process's CPU within the burst
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile() // a second stop (after the burst) is a no-op
	}
	b.ResetTimer()
	burst := time.Now()
	for i := range b.N {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			pod := &corev1.Pod{}
			pod.Name, pod.Namespace = fmt.Sprintf("p%d", i), "default"
			pod.Spec.NodeName = nodeName
			pod.Spec.Containers = []corev1.Container{ctr}
			mu.Lock()
			created[pod.Name] = time.Now()
			mu.Unlock()
			if err := c.Create(ctx, pod); err != nil {
				b.Error(err)
			}
		}()
	}
	select {
	case <-allRunning:
	case <-time.After(3 * time.Minute):
		list := &corev1.PodList{}
		_ = c.List(context.WithoutCancel(ctx), list, client.InNamespace("default"))
		for _, p := range list.Items {
			if p.Status.Phase != corev1.PodRunning {
				var waiting any
				if cs := p.Status.ContainerStatuses; len(cs) > 0 && cs[0].State.Waiting != nil {
					waiting = *cs[0].State.Waiting
				}
				b.Logf("pod %s: phase %s, message %q, waiting %+v", p.Name, p.Status.Phase, p.Status.Message, waiting)
			}
		}
		b.Fatal("pods did not all run")
	}
	b.StopTimer()
	pprof.StopCPUProfile()
	if os.Getenv("BENCH_WINDOW") != "" { // for hack/podstart-cpu.sh: the burst's CPU
		b.Logf("burst window %d %d", burst.UnixNano(), time.Now().UnixNano())
	}
	mu.Lock()
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	perPod := float64(writes) / float64(len(lat))
	mu.Unlock()
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(perPod, "writes/pod")
	// Delete the pods and let the agent remove them (containers, pod
	// networks) before it stops: a stopped agent keeps both for its restart.
	list := &corev1.PodList{}
	if err := c.List(context.WithoutCancel(ctx), list, client.InNamespace("default")); err == nil {
		for i := range list.Items {
			_ = c.Delete(context.WithoutCancel(ctx), &list.Items[i])
		}
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := c.List(context.WithoutCancel(ctx), list, client.InNamespace("default")); err == nil && len(list.Items) == 0 {
			return
		}
	}
	b.Logf("%d pods still exist a minute after their deletion", len(list.Items))
}
