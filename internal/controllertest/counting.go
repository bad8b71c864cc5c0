package controllertest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/testenv"
)

// CountingClient forwards to a client.Client and counts the calls, each one
// request to the API server: benchmarks compare a reconciler reading the
// server with one reading the cache by the requests each makes.
type CountingClient struct {
	C *client.Client
	n atomic.Int64
}

// Calls returns the number of calls so far.
func (k *CountingClient) Calls() int64 { return k.n.Load() }

// Reset sets the count to zero.
func (k *CountingClient) Reset() { k.n.Store(0) }

func (k *CountingClient) Get(ctx context.Context, key client.ObjectKey, obj api.Object) error {
	k.n.Add(1)
	return k.C.Get(ctx, key, obj)
}

func (k *CountingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	k.n.Add(1)
	return k.C.List(ctx, list, opts...)
}

func (k *CountingClient) Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error {
	k.n.Add(1)
	return k.C.Create(ctx, obj, opts...)
}

func (k *CountingClient) Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error {
	k.n.Add(1)
	return k.C.Update(ctx, obj, opts...)
}

func (k *CountingClient) Patch(ctx context.Context, obj api.Object, patch client.Patch, opts ...client.PatchOption) error {
	k.n.Add(1)
	return k.C.Patch(ctx, obj, patch, opts...)
}

func (k *CountingClient) Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error {
	k.n.Add(1)
	return k.C.Delete(ctx, obj, opts...)
}

// Status counts one request: every status write is one.
func (k *CountingClient) Status() client.StatusWriter {
	k.n.Add(1)
	return k.C.Status()
}

// RequestsPerReconcile checks that one steady-state reconcile of req makes
// wantServer API requests through calls when fromServer (reading through
// calls) runs it, and none when fromCache (reading the informers) does.
func RequestsPerReconcile(t *testing.T, fromServer, fromCache reconcile.Reconciler, calls *CountingClient, req reconcile.Request, wantServer int64) {
	t.Helper()
	for _, c := range []struct {
		name string
		r    reconcile.Reconciler
		want int64
	}{{"server", fromServer, wantServer}, {"cache", fromCache, 0}} {
		calls.Reset()
		if _, err := c.r.Reconcile(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		if got := calls.Calls(); got != c.want {
			t.Errorf("%s reads: %d API requests per steady reconcile, want %d", c.name, got, c.want)
		}
	}
}

// BenchmarkReads runs the steady-state reconcile of req with fromServer
// (sub-benchmark server-reads) and fromCache (cache-reads), reporting
// api-requests/reconcile and reconciles/s.
func BenchmarkReads(b *testing.B, fromServer, fromCache reconcile.Reconciler, calls *CountingClient, req reconcile.Request) {
	for _, bc := range []struct {
		name string
		r    reconcile.Reconciler
	}{{"server-reads", fromServer}, {"cache-reads", fromCache}} {
		b.Run(bc.name, func(b *testing.B) {
			calls.Reset()
			start := time.Now()
			for b.Loop() {
				if _, err := bc.r.Reconcile(b.Context(), req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(calls.Calls())/float64(b.N), "api-requests/reconcile")
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reconciles/s")
		})
	}
}

// ServerAndInformers starts a control plane without controllers for a read
// benchmark and returns a client of it and shared informers on that client;
// create the informers the reconciler reads, then StartInformers.
func ServerAndInformers(tb testing.TB) (*client.Client, *cache.SharedInformers) {
	tb.Helper()
	env, err := testenv.Start(tb.Context(), testenv.Options{})
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
	return c, cache.NewSharedInformers(c)
}

// StartInformers runs inf until the test ends.
func StartInformers(tb testing.TB, inf *cache.SharedInformers) {
	ctx, cancel := context.WithCancel(tb.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = inf.Start(ctx) }()
	tb.Cleanup(func() { cancel(); <-done })
}

// Settle reconciles req with r until settled reports true (what it
// returns second says where things stand), failing after 30 s.
func Settle(tb testing.TB, r reconcile.Reconciler, req reconcile.Request, settled func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := r.Reconcile(tb.Context(), req); err != nil {
			tb.Fatal(err)
		}
		ok, state := settled()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s not settled after 30 s: %s", req.ObjectKey, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
