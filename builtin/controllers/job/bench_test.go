package job_test

import (
	"fmt"
	"testing"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/job"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/internal/controllertest"
)

// Steady-state reconciles of one running Job with benchPods pods, reading the
// server on every reconcile (the controller before it moved to the cache) and
// reading the informer cache (now), in one process against one control plane:
//
//	go test ./builtin/controllers/job/ -run '^$' -bench BenchmarkSteadyReconcile -benchtime 200x
//
// Metrics: api-requests/reconcile (calls that reached the API server) and
// reconciles/s.
const benchPods = 20

// TestAPIRequestsPerReconcile: a steady-state reconcile reads the Job and its
// pods. From the server that is two requests; from the cache none, and it
// decides the same (no writes).
func TestAPIRequestsPerReconcile(t *testing.T) {
	fromServer, fromCache, calls, req := steadyJob(t)
	controllertest.RequestsPerReconcile(t, fromServer, fromCache, calls, req, 2)
}

func BenchmarkSteadyReconcile(b *testing.B) {
	fromServer, fromCache, calls, req := steadyJob(b)
	controllertest.BenchmarkReads(b, fromServer, fromCache, calls, req)
}

// steadyJob starts a control plane without controllers and one Job of
// benchPods parallel pods, reconciles it until they all exist (in the cache
// too), and returns a server-reading and a cache-reading reconciler with the
// counter of their API requests.
func steadyJob(tb testing.TB) (fromServer, fromCache reconcile.Reconciler, calls *controllertest.CountingClient, req reconcile.Request) {
	tb.Helper()
	ctx := tb.Context()
	c, inf := controllertest.ServerAndInformers(tb)
	pods, err := cache.InformerFor(inf, cache.InformerOptions[*corev1.Pod]{})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := cache.InformerFor(inf, cache.InformerOptions[*batchv1.Job]{}); err != nil {
		tb.Fatal(err)
	}
	controllertest.StartInformers(tb, inf)

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: "bench"}}); err != nil {
		tb.Fatal(err)
	}
	j := &batchv1.Job{ObjectMeta: api.ObjectMeta{Namespace: "bench", Name: "work"}, Spec: batchv1.JobSpec{
		Parallelism: api.Ptr[int32](benchPods), Completions: api.Ptr[int32](benchPods * 10),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "work", Image: "work:1"}}}},
	}}
	if err := c.Create(ctx, j); err != nil {
		tb.Fatal(err)
	}
	calls = &controllertest.CountingClient{C: c}
	fromServer, fromCache = job.NewReconciler(calls, calls), job.NewReconciler(cache.NewReader(inf), calls)
	req = reconcile.Request{ObjectKey: client.ObjectKeyFromObject(j)}
	// Until every pod exists and the status says so, in the cache too.
	controllertest.Settle(tb, fromServer, req, func() (bool, string) {
		cur := &batchv1.Job{}
		if err := cache.NewReader(inf).Get(ctx, req.ObjectKey, cur); err != nil {
			return false, err.Error() // not cached yet
		}
		return cur.Status.Active == benchPods && pods.Store().Len() == benchPods, fmt.Sprintf("%+v", cur.Status)
	})
	return fromServer, fromCache, calls, req
}
