package daemonset_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/api/all"
	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/daemonset"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/testenv"
)

// Steady-state reconciles of one DaemonSet over benchNodes nodes whose pods
// all exist, reading the server on every reconcile (the controller before it
// moved to the cache) and reading the informer cache (now). Both run in one
// process against the same control plane:
//
//	go test ./builtin/controllers/daemonset/ -run '^$' -bench BenchmarkSteadyReconcile -benchtime 200x
//
// Metrics: api-requests/reconcile (calls that reached the API server) and
// reconciles/s.
const benchNodes = 50

// counting forwards to a client.Client and counts the calls, each one HTTP
// request to the API server.
type counting struct {
	c *client.Client
	n atomic.Int64
}

func (k *counting) Get(ctx context.Context, key client.ObjectKey, obj api.Object) error {
	k.n.Add(1)
	return k.c.Get(ctx, key, obj)
}

func (k *counting) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	k.n.Add(1)
	return k.c.List(ctx, list, opts...)
}

func (k *counting) Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error {
	k.n.Add(1)
	return k.c.Create(ctx, obj, opts...)
}

func (k *counting) Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error {
	k.n.Add(1)
	return k.c.Update(ctx, obj, opts...)
}

func (k *counting) Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error {
	k.n.Add(1)
	return k.c.Delete(ctx, obj, opts...)
}

func (k *counting) Status() client.StatusWriter {
	k.n.Add(1) // every status write is one request
	return k.c.Status()
}

// steadyDaemonSet starts a control plane without controllers, benchNodes
// nodes and one DaemonSet, reconciles it until it has a pod on every node,
// and returns the server-reading and the cache-reading reconcilers with the
// counter of their API requests.
func steadyDaemonSet(tb testing.TB) (fromServer, fromCache reconcile.Reconciler, calls *counting, req reconcile.Request) {
	tb.Helper()
	ctx := tb.Context()
	env, err := testenv.Start(ctx, testenv.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = env.Stop() })
	sch, err := all.NewScheme()
	if err != nil {
		tb.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	if err != nil {
		tb.Fatal(err)
	}
	inf := cache.NewSharedInformers(c)
	pods, err := cache.InformerFor(inf, cache.InformerOptions[*corev1.Pod]{})
	if err != nil {
		tb.Fatal(err)
	}
	for _, err := range []error{
		func() error { _, err := cache.InformerFor(inf, cache.InformerOptions[*corev1.Node]{}); return err }(),
		func() error { _, err := cache.InformerFor(inf, cache.InformerOptions[*appsv1.DaemonSet]{}); return err }(),
		func() error {
			_, err := cache.InformerFor(inf, cache.InformerOptions[*appsv1.ControllerRevision]{})
			return err
		}(),
	} {
		if err != nil {
			tb.Fatal(err)
		}
	}
	ictx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = inf.Start(ictx) }()
	tb.Cleanup(func() { cancel(); <-done })

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: "bench"}}); err != nil {
		tb.Fatal(err)
	}
	for i := range benchNodes {
		if err := c.Create(ctx, &corev1.Node{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("bench-%03d", i)}}); err != nil {
			tb.Fatal(err)
		}
	}
	ds := &appsv1.DaemonSet{ObjectMeta: api.ObjectMeta{Namespace: "bench", Name: "agent"}, Spec: appsv1.DaemonSetSpec{
		Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "agent"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent:1"}}}},
	}}
	if err := c.Create(ctx, ds); err != nil {
		tb.Fatal(err)
	}
	calls = &counting{c: c}
	fromServer = daemonset.NewReconciler(calls, calls, pods)
	fromCache = daemonset.NewReconciler(cache.NewReader(inf), calls, pods)
	req = reconcile.Request{ObjectKey: client.ObjectKeyFromObject(ds)}
	// Until every node has its pod and the status says so, in the cache too.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := fromServer.Reconcile(ctx, req); err != nil {
			tb.Fatal(err)
		}
		cur := &appsv1.DaemonSet{}
		if err := cache.NewReader(inf).Get(ctx, req.ObjectKey, cur); err != nil {
			tb.Fatal(err)
		}
		if cur.Status.CurrentNumberScheduled == benchNodes && pods.Store().Len() == benchNodes {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("daemonset not settled: %+v", cur.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fromServer, fromCache, calls, req
}

// TestAPIRequestsPerReconcile: a steady-state reconcile reads the DaemonSet,
// the nodes, its pods and its revisions. From the server that is four
// requests; from the cache none, and it decides the same (no writes).
func TestAPIRequestsPerReconcile(t *testing.T) {
	fromServer, fromCache, calls, req := steadyDaemonSet(t)
	for name, r := range map[string]reconcile.Reconciler{"server": fromServer, "cache": fromCache} {
		calls.n.Store(0)
		if _, err := r.Reconcile(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		if name == "server" {
			want = 4
		}
		if got := calls.n.Load(); got != want {
			t.Errorf("%s reads: %d API requests per steady reconcile, want %d", name, got, want)
		}
	}
}

func BenchmarkSteadyReconcile(b *testing.B) {
	fromServer, fromCache, calls, req := steadyDaemonSet(b)
	for _, bc := range []struct {
		name string
		r    reconcile.Reconciler
	}{{"server-reads", fromServer}, {"cache-reads", fromCache}} {
		b.Run(bc.name, func(b *testing.B) {
			calls.n.Store(0)
			start := time.Now()
			for b.Loop() {
				if _, err := bc.r.Reconcile(b.Context(), req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(calls.n.Load())/float64(b.N), "api-requests/reconcile")
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reconciles/s")
		})
	}
}
