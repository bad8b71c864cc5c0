package daemonset_test

import (
	"fmt"
	"testing"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/daemonset"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/internal/controllertest"
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

// steadyDaemonSet starts a control plane without controllers, benchNodes
// nodes and one DaemonSet, reconciles it until it has a pod on every node,
// and returns the server-reading and the cache-reading reconcilers with the
// counter of their API requests.
func steadyDaemonSet(tb testing.TB) (fromServer, fromCache reconcile.Reconciler, calls *controllertest.CountingClient, req reconcile.Request) {
	tb.Helper()
	ctx := tb.Context()
	c, inf := controllertest.ServerAndInformers(tb)
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
	controllertest.StartInformers(tb, inf)

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
	calls = &controllertest.CountingClient{C: c}
	fromServer = daemonset.NewReconciler(calls, calls, pods)
	fromCache = daemonset.NewReconciler(cache.NewReader(inf), calls, pods)
	req = reconcile.Request{ObjectKey: client.ObjectKeyFromObject(ds)}
	// Until every node has its pod and the status says so, in the cache too.
	controllertest.Settle(tb, fromServer, req, func() (bool, string) {
		cur := &appsv1.DaemonSet{}
		if err := cache.NewReader(inf).Get(ctx, req.ObjectKey, cur); err != nil {
			return false, err.Error() // not cached yet
		}
		return cur.Status.CurrentNumberScheduled == benchNodes && pods.Store().Len() == benchNodes, fmt.Sprintf("%+v", cur.Status)
	})
	return fromServer, fromCache, calls, req
}

// TestAPIRequestsPerReconcile: a steady-state reconcile reads the DaemonSet,
// the nodes, its pods and its revisions. From the server that is four
// requests; from the cache none, and it decides the same (no writes).
func TestAPIRequestsPerReconcile(t *testing.T) {
	fromServer, fromCache, calls, req := steadyDaemonSet(t)
	controllertest.RequestsPerReconcile(t, fromServer, fromCache, calls, req, 4)
}

func BenchmarkSteadyReconcile(b *testing.B) {
	fromServer, fromCache, calls, req := steadyDaemonSet(b)
	controllertest.BenchmarkReads(b, fromServer, fromCache, calls, req)
}
