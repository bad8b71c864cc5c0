package node_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/cri/process"
	"github.com/converge-dev/converge/builtin/node/cri/runtimetest"
	"github.com/converge-dev/converge/framework/api/fields"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

// BenchmarkPodStartup measures pod startup latency on the process runtime:
// from the create request until a watch (spec.nodeName=<node>) sees the pod
// Running. Pods are created and bound one after another, 10 at a time in
// flight. Reports p50/p99 in milliseconds (goal: p99 ≤ 1 s).
//
//	go test ./builtin/node -run '^$' -bench PodStartup -benchtime 200x
func BenchmarkPodStartup(b *testing.B) {
	helper := runtimetest.BuildHelper(b)
	env := testenv.StartT(b, testenv.Options{})
	sch, err := all.NewScheme()
	if err != nil {
		b.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	if err != nil {
		b.Fatal(err)
	}
	agent, err := node.New(node.Options{NodeName: "bench", Config: &client.Config{Host: env.URL},
		Runtime: process.New(process.Options{}), RootDir: filepath.Join(env.Dir, "node"), PodCIDR: "127.88.0.0/16"})
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
	w, err := c.Watch(ctx, &corev1.PodList{}, client.InNamespace("default"),
		&client.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", "bench")})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	allRunning := make(chan struct{})
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || p.Status.Phase != corev1.PodRunning {
				continue
			}
			now := time.Now()
			mu.Lock()
			if t0, ok := created[p.Name]; ok && !running[p.Name] {
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
	b.ResetTimer()
	for i := range b.N {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			pod := &corev1.Pod{}
			pod.Name, pod.Namespace = fmt.Sprintf("p%d", i), "default"
			pod.Spec.NodeName = "bench"
			pod.Spec.Containers = []corev1.Container{{Name: "c", Image: "local/helper", Command: []string{helper, "sleep", "forever"}}}
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
	case <-time.After(5 * time.Minute):
		b.Fatal("pods did not all run")
	}
	b.StopTimer()
	mu.Lock()
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	mu.Unlock()
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	list := &corev1.PodList{}
	if err := c.List(context.WithoutCancel(ctx), list, client.InNamespace("default")); err == nil {
		for i := range list.Items {
			_ = c.Delete(context.WithoutCancel(ctx), &list.Items[i])
		}
	}
}
