// Benchmarks of the Deployment and ReplicaSet controllers at 1,000 replicas,
// through the real in-process control plane (testenv). Opt-in, one iteration
// each (-count 5 for a spread; wall times on a shared machine vary a lot,
// cpu-ms/pod much less):
//
//	go test ./builtin/controllers/deployment/ -run '^$' -bench 'BenchmarkDeployment' -benchtime 1x -timeout 30m
//
// With BENCH_CPUPROFILE=/tmp/deploy the CPU profile of each timed window is
// written to /tmp/deploy-create.pprof and /tmp/deploy-rollout.pprof
// (`go tool pprof -tagignore bench=harness ...` hides the harness). go test's
// own -cpuprofile works too, but then ctrl-cpu-ms/pod is not reported, as
// only one CPU profile can run at a time. BENCH_REPLICAS overrides the 1,000.
//
// Metrics, per timed window: seconds, pods/s (replicas / seconds), cpu-ms/pod
// (process CPU time from getrusage / replicas; the process also runs the API
// server, etcd and the benchmark's own watches and fake kubelet) and
// ctrl-cpu-ms/pod (the samples of a CPU profile of the same window whose
// stacks are in the controller packages, the framework parts that run them
// — informers, work queue, client, event recorder — or their HTTP client
// connections; the harness's goroutines carry the pprof label bench=harness
// and are left out). The log adds etcd writes per pod and reconcile counts.
package deployment_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/converge-dev/converge/builtin/api/all"
	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

// benchKubeletWorkers is the concurrency of the fake kubelet's status writes.
const benchKubeletWorkers = 32

func benchReplicas() int {
	var n int
	if s := os.Getenv("BENCH_REPLICAS"); s != "" {
		if _, err := fmt.Sscan(s, &n); err == nil && n > 0 {
			return n
		}
	}
	return 1000
}

// benchEnv is a control plane running the deployment and replicaset
// controllers, and a client and informers for the harness, whose goroutines
// carry the pprof label bench=harness.
type benchEnv struct {
	env       *testenv.Environment
	c         *client.Client
	informers *cache.SharedInformers
	pods      *cache.Informer[*corev1.Pod]
	deps      *cache.Informer[*appsv1.Deployment]
}

// startBenchEnv starts the environment with the benchmark timer stopped:
// only the windows (startWindow to stop) are timed.
func startBenchEnv(b *testing.B) (*benchEnv, context.Context) {
	b.Helper()
	b.StopTimer()
	// The control plane is started outside the labelled region: its
	// goroutines (API server, etcd, controllers) must not carry the label.
	env, err := testenv.Start(b.Context(), testenv.Options{Controllers: []string{"deployment", "replicaset"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = env.Stop() })
	if env.ControlPlane.Manager() == nil {
		b.Fatal("no controller manager")
	}
	ctx := pprof.WithLabels(b.Context(), pprof.Labels("bench", "harness"))
	pprof.SetGoroutineLabels(ctx)
	b.Cleanup(func() { pprof.SetGoroutineLabels(context.Background()) })

	sch, err := all.NewScheme()
	if err != nil {
		b.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	if err != nil {
		b.Fatal(err)
	}
	be := &benchEnv{env: env, c: c, informers: cache.NewSharedInformers(c)}
	if be.pods, err = cache.InformerFor(be.informers, cache.InformerOptions[*corev1.Pod]{}); err != nil {
		b.Fatal(err)
	}
	if be.deps, err = cache.InformerFor(be.informers, cache.InformerOptions[*appsv1.Deployment]{}); err != nil {
		b.Fatal(err)
	}
	ictx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = be.informers.Start(ictx) }()
	b.Cleanup(func() { cancel(); <-done })
	if !be.pods.WaitForCacheSync(ctx) || !be.deps.WaitForCacheSync(ctx) {
		b.Fatal("harness informers not synced")
	}
	return be, ctx
}

func (be *benchEnv) namespace(b *testing.B, ctx context.Context, name string) {
	b.Helper()
	if err := be.c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: name}}); err != nil {
		b.Fatal(err)
	}
}

// podCounter closes done when n distinct pods of ns have been seen created.
type podCounter struct {
	ns    string
	n     int64
	seen  sync.Map
	count atomic.Int64
	done  chan struct{}
}

func (pc *podCounter) handle(e cache.Event[*corev1.Pod]) {
	if e.Type != cache.Added || e.Object.Namespace != pc.ns {
		return
	}
	if _, dup := pc.seen.LoadOrStore(e.Object.UID, struct{}{}); dup {
		return
	}
	if pc.count.Add(1) == pc.n {
		close(pc.done)
	}
}

// kubelet marks every pending pod of ns bound, Running and Ready and finishes
// the deletion of terminating ones, like the suite's kubelet helper (binding,
// then a status patch), but fed by a watch and with benchKubeletWorkers
// concurrent writers. It stops with ctx.
func (be *benchEnv) kubelet(ctx context.Context, ns string) {
	queue := make(chan *corev1.Pod, 1<<16)
	var queued, finishing sync.Map
	be.pods.AddHandler(func(e cache.Event[*corev1.Pod]) {
		p := e.Object
		if e.Type == cache.Deleted || p.Namespace != ns {
			return
		}
		if p.DeletionTimestamp != nil {
			// Finish the graceful deletion, as an agent does.
			if _, dup := finishing.LoadOrStore(p.UID, struct{}{}); !dup {
				select {
				case queue <- p:
				case <-ctx.Done():
				}
			}
			return
		}
		if p.Status.Phase != "" && p.Status.Phase != corev1.PodPending {
			return
		}
		if _, dup := queued.LoadOrStore(p.UID, struct{}{}); dup {
			return
		}
		select {
		case queue <- p:
		case <-ctx.Done():
		}
	})
	for range benchKubeletWorkers {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case p := <-queue:
					work := be.markReady
					if p.DeletionTimestamp != nil {
						work = func(ctx context.Context, p *corev1.Pod) error {
							return be.c.Delete(ctx, p, client.GracePeriodSeconds(0))
						}
					}
					for ctx.Err() == nil {
						if err := work(ctx, p); err == nil || apierrors.IsNotFound(err) {
							break
						}
						time.Sleep(10 * time.Millisecond)
					}
				}
			}
		}()
	}
}

func (be *benchEnv) markReady(ctx context.Context, cached *corev1.Pod) error {
	if cached.Spec.NodeName == "" {
		err := be.c.Create(ctx, &corev1.Binding{ObjectMeta: api.ObjectMeta{Name: cached.Name, Namespace: cached.Namespace},
			Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}})
		if err != nil && !apierrors.IsConflict(err) {
			return err
		}
	}
	p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: cached.Name, Namespace: cached.Namespace}}
	orig := &corev1.Pod{ObjectMeta: p.ObjectMeta}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: api.Now()}}
	return be.c.Status().Patch(ctx, p, client.MergeFrom(orig))
}

// rolledOut returns a channel closed once ns/name has replicas updated,
// available and current replicas, its generation observed and at least
// generation minGen.
func (be *benchEnv) rolledOut(ns, name string, minGen int64) <-chan struct{} {
	done := make(chan struct{})
	var once sync.Once
	check := func(d *appsv1.Deployment) {
		if d.Namespace != ns || d.Name != name || d.Generation < minGen || d.Spec.Replicas == nil {
			return
		}
		n, st := *d.Spec.Replicas, d.Status
		if st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == n && st.AvailableReplicas == n && st.Replicas == n {
			once.Do(func() { close(done) })
		}
	}
	be.deps.AddHandler(func(e cache.Event[*appsv1.Deployment]) {
		if e.Type != cache.Deleted {
			check(e.Object)
		}
	})
	for _, d := range be.deps.Store().List() {
		check(d)
	}
	return done
}

func benchDeployment(ns, name string, replicas int32, image string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: api.Ptr(replicas),
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}},
			},
		},
	}
}

// window measures one timed window: wall time, process CPU (getrusage) and,
// when no other CPU profile runs, the controllers' CPU from a profile.
type window struct {
	be      *benchEnv
	rev0    int64
	rec0    map[string]float64
	name    string
	start   time.Time
	cpu0    time.Duration
	prof    bytes.Buffer
	profile bool
}

func (be *benchEnv) startWindow(b *testing.B, name string) *window {
	w := &window{be: be, name: name, rev0: be.etcdRevision(b), rec0: be.reconciles(b)}
	w.profile = pprof.StartCPUProfile(&w.prof) == nil
	if !w.profile {
		b.Log("a CPU profile is already running (-cpuprofile): ctrl-cpu-ms/pod not measured")
	}
	w.cpu0, w.start = processCPU(b), time.Now()
	b.StartTimer()
	return w
}

// totals adds up the windows of a benchmark.
type totals struct {
	pods                  int
	elapsed, cpu, ctrlCPU time.Duration
	profiled              bool
}

// report reports the metrics, averaged over the windows.
func (t *totals) report(b *testing.B) {
	if t.pods == 0 {
		return
	}
	b.ReportMetric(t.elapsed.Seconds()/float64(b.N), "seconds")
	b.ReportMetric(float64(t.pods)/t.elapsed.Seconds(), "pods/s")
	b.ReportMetric(float64(t.cpu.Microseconds())/1000/float64(t.pods), "cpu-ms/pod")
	if t.profiled {
		b.ReportMetric(float64(t.ctrlCPU.Microseconds())/1000/float64(t.pods), "ctrl-cpu-ms/pod")
	}
}

// stop ends the window, a run of n pods, and adds it to t.
func (w *window) stop(b *testing.B, n int, t *totals) {
	b.StopTimer()
	elapsed, cpu := time.Since(w.start), processCPU(b)-w.cpu0
	if w.profile {
		pprof.StopCPUProfile()
	}
	writes := w.be.etcdRevision(b) - w.rev0
	rec := w.be.reconciles(b)
	b.Logf("%s: %d pods in %v, process CPU %v; %d etcd writes (%.1f per pod); reconciles: deployment %.0f, replicaset %.0f",
		w.name, n, elapsed, cpu, writes, float64(writes)/float64(n), rec["deployment"]-w.rec0["deployment"], rec["replicaset"]-w.rec0["replicaset"])
	t.pods, t.elapsed, t.cpu = t.pods+n, t.elapsed+elapsed, t.cpu+cpu
	if !w.profile {
		return
	}
	if prefix := os.Getenv("BENCH_CPUPROFILE"); prefix != "" {
		f := prefix + "-" + w.name + ".pprof"
		if err := os.WriteFile(f, w.prof.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
		b.Logf("wrote %s", f)
	}
	sh, err := profileShares(w.prof.Bytes())
	if err != nil {
		b.Fatalf("read CPU profile: %v", err)
	}
	t.profiled, t.ctrlCPU = true, t.ctrlCPU+sh.controllers
	b.Logf("%s: profile %v: controllers %v, harness %v, other (API server, etcd, runtime) %v",
		w.name, sh.total, sh.controllers, sh.harness, sh.total-sh.controllers-sh.harness)
}

// etcdRevision is the store's revision: its growth is the number of writes.
func (be *benchEnv) etcdRevision(b *testing.B) int64 {
	resp, err := be.env.ControlPlane.EtcdClient().Get(b.Context(), "/bench-revision-probe")
	if err != nil {
		b.Fatal(err)
	}
	return resp.Header.Revision
}

// reconciles returns controller_runtime_reconcile_total by controller.
func (be *benchEnv) reconciles(b *testing.B) map[string]float64 {
	mfs, err := be.env.ControlPlane.Manager().Registry().Gather()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDeploymentCreate creates a Deployment of 1,000 replicas and times
// until the watch has seen its 1,000 pods created (they stay Pending).
func BenchmarkDeploymentCreate(b *testing.B) {
	n := benchReplicas()
	be, ctx := startBenchEnv(b)
	var t totals
	defer t.report(b)
	for i := range b.N {
		ns := fmt.Sprintf("bench-create-%d", i)
		be.namespace(b, ctx, ns)
		pc := &podCounter{ns: ns, n: int64(n), done: make(chan struct{})}
		be.pods.AddHandler(pc.handle)

		w := be.startWindow(b, "create")
		if err := be.c.Create(ctx, benchDeployment(ns, "web", int32(n), "nginx:1")); err != nil {
			b.Fatal(err)
		}
		select {
		case <-pc.done:
		case <-time.After(10 * time.Minute):
			b.Fatalf("only %d of %d pods created", pc.count.Load(), n)
		}
		w.stop(b, n, &t)
	}
}

// BenchmarkDeploymentRollout rolls a Deployment of 1,000 ready replicas to a
// new image with the default strategy (maxSurge 25%, maxUnavailable 25%),
// a fake kubelet marking new pods Running and Ready, and times from the image
// change until the rollout is complete (updated = available = replicas =
// 1,000, generation observed).
func BenchmarkDeploymentRollout(b *testing.B) {
	n := benchReplicas()
	be, ctx := startBenchEnv(b)
	var t totals
	defer t.report(b)
	for i := range b.N {
		ns := fmt.Sprintf("bench-rollout-%d", i)
		be.namespace(b, ctx, ns)
		kctx, kcancel := context.WithCancel(ctx)
		be.kubelet(kctx, ns)

		d := benchDeployment(ns, "web", int32(n), "nginx:1")
		ready := be.rolledOut(ns, "web", 1)
		t0 := time.Now()
		if err := be.c.Create(ctx, d); err != nil {
			b.Fatal(err)
		}
		select {
		case <-ready:
		case <-time.After(10 * time.Minute):
			b.Fatal("initial rollout did not complete")
		}
		b.Logf("initial: %d ready pods in %v", n, time.Since(t0))

		done := be.rolledOut(ns, "web", d.Generation+1)
		w := be.startWindow(b, "rollout")
		patch := `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}}}`
		if err := be.c.Patch(ctx, d, client.RawPatch(client.MergePatchType, []byte(patch))); err != nil {
			b.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(10 * time.Minute):
			b.Fatal("rollout did not complete")
		}
		w.stop(b, n, &t)
		kcancel()
	}
}

// shares is a CPU profile's total and the parts of the controllers and the
// harness.
type shares struct{ total, controllers, harness time.Duration }

// controllerFrames are the function-name prefixes that make a sample the
// controllers': their own packages, the framework parts that run them, and
// the HTTP client connections (unlabelled ones belong to the manager: the
// harness's are labelled and the API server's are server side).
var controllerFrames = []string{
	"github.com/converge-dev/converge/builtin/controllers/",
	"github.com/converge-dev/converge/framework/controller.",
	"github.com/converge-dev/converge/framework/cache.",
	"github.com/converge-dev/converge/framework/workqueue.",
	"github.com/converge-dev/converge/framework/client.",
	"github.com/converge-dev/converge/framework/client/",
	"github.com/converge-dev/converge/framework/manager.",
	"github.com/converge-dev/converge/framework/record.",
	"github.com/converge-dev/converge/framework/handler.",
	"github.com/converge-dev/converge/framework/builder.",
	"net/http.(*persistConn).",
	"net/http.(*Transport).",
}

// profileShares splits a gzipped pprof CPU profile. It reads the protobuf
// directly (field numbers of profile.proto) to stay within the module's
// dependencies.
func profileShares(gz []byte) (shares, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return shares{}, err
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return shares{}, err
	}
	type sample struct {
		locs   []uint64
		value  int64
		labels [][2]uint64 // key, str (string table indices)
	}
	var (
		strs     []string
		funcName = map[uint64]uint64{} // function id -> name's string index
		locFuncs = map[uint64][]uint64{}
		samples  []sample
	)
	err = eachField(data, func(num protowire.Number, _ protowire.Type, _ uint64, b []byte) error {
		switch num {
		case 2: // sample
			var s sample
			var vals []uint64
			err := eachField(b, func(n protowire.Number, t protowire.Type, v uint64, mb []byte) error {
				switch n {
				case 1: // location_id
					return eachVarint(t, v, mb, func(x uint64) { s.locs = append(s.locs, x) })
				case 2: // value
					return eachVarint(t, v, mb, func(x uint64) { vals = append(vals, x) })
				case 3: // label
					var l [2]uint64
					err := eachField(mb, func(n protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
						if n == 1 || n == 2 {
							l[n-1] = v
						}
						return nil
					})
					s.labels = append(s.labels, l)
					return err
				}
				return nil
			})
			if err != nil {
				return err
			}
			if len(vals) > 0 {
				s.value = int64(vals[len(vals)-1]) // samples/count, cpu/nanoseconds
			}
			samples = append(samples, s)
		case 4: // location
			var id uint64
			var fns []uint64
			err := eachField(b, func(n protowire.Number, _ protowire.Type, v uint64, mb []byte) error {
				switch n {
				case 1:
					id = v
				case 4: // line
					return eachField(mb, func(n protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
						if n == 1 {
							fns = append(fns, v)
						}
						return nil
					})
				}
				return nil
			})
			if err != nil {
				return err
			}
			locFuncs[id] = fns
		case 5: // function
			var id, name uint64
			err := eachField(b, func(n protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
				switch n {
				case 1:
					id = v
				case 2:
					name = v
				}
				return nil
			})
			if err != nil {
				return err
			}
			funcName[id] = name
		case 6: // string_table
			strs = append(strs, string(b))
		}
		return nil
	})
	if err != nil {
		return shares{}, err
	}
	str := func(i uint64) string {
		if i < uint64(len(strs)) {
			return strs[i]
		}
		return ""
	}
	var sh shares
	for _, s := range samples {
		d := time.Duration(s.value)
		sh.total += d
		harness := false
		for _, l := range s.labels {
			harness = harness || (str(l[0]) == "bench" && str(l[1]) == "harness")
		}
		if harness {
			sh.harness += d
			continue
		}
	frames:
		for _, loc := range s.locs {
			for _, fn := range locFuncs[loc] {
				name := str(funcName[fn])
				for _, prefix := range controllerFrames {
					if strings.HasPrefix(name, prefix) {
						sh.controllers += d
						break frames
					}
				}
			}
		}
	}
	return sh, nil
}

// eachField calls fn for every field of the protobuf message b: v is the
// value of varint fields, mb the bytes of length-delimited ones.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, v uint64, mb []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var (
			v  uint64
			mb []byte
		)
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			mb, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, typ, v, mb); err != nil {
			return err
		}
	}
	return nil
}

// eachVarint calls fn for the values of a repeated varint field, packed or
// not.
func eachVarint(typ protowire.Type, v uint64, mb []byte, fn func(uint64)) error {
	if typ == protowire.VarintType {
		fn(v)
		return nil
	}
	for len(mb) > 0 {
		x, n := protowire.ConsumeVarint(mb)
		if n < 0 {
			return protowire.ParseError(n)
		}
		fn(x)
		mb = mb[n:]
	}
	return nil
}
