package informer

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	namespace   = "bench"
	podCount    = 10000
	createConns = 32
)

// fixture is the environment shared by every benchmark of the package: one
// Converge API server with podCount Pods, and one client of each kind.
type fixture struct {
	env       *testenv.Environment
	converge  *client.Client
	clientset kubernetes.Interface
	podBytes  int // JSON size of one Pod as the server returns it
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fix != nil {
		_ = fix.env.Stop()
	}
	os.Exit(code)
}

func getFixture(b *testing.B) *fixture {
	fixOnce.Do(func() { fix, fixErr = setup() })
	if fixErr != nil {
		b.Fatal(fixErr)
	}
	return fix
}

func setup() (*fixture, error) {
	ctx := context.Background()
	env, err := testenv.Start(ctx, testenv.Options{})
	if err != nil {
		return nil, err
	}
	f := &fixture{env: env}
	s, err := all.NewScheme()
	if err != nil {
		return nil, err
	}
	if f.converge, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: s}); err != nil {
		return nil, err
	}
	// client-go's defaults (QPS 5) would only slow down its own informer's
	// single LIST+WATCH, but keep them unlimited like Converge's client.
	cfg := &rest.Config{Host: env.URL, QPS: -1}
	if f.clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: namespace}}
	if err := f.converge.Create(ctx, ns); err != nil {
		return nil, fmt.Errorf("create namespace: %w", err)
	}
	start := time.Now()
	if err := createPods(ctx, f.converge); err != nil {
		return nil, err
	}
	var p corev1.Pod
	if err := f.converge.Get(ctx, client.ObjectKey{Namespace: namespace, Name: podName(0)}, &p); err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(&p)
	f.podBytes = len(raw)
	fmt.Fprintf(os.Stderr, "informer: created %d pods (%d B of JSON each) in %v\n",
		podCount, f.podBytes, time.Since(start).Round(time.Millisecond))
	// Warm both clients up (discovery, connections) outside the measurements.
	var pl corev1.PodList
	if err := f.converge.List(ctx, &pl, client.InNamespace(namespace), client.Limit(1)); err != nil {
		return nil, err
	}
	if _, err := f.clientset.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return nil, err
	}
	// Warm up outside the measurements: the first LIST or WATCH of a resource
	// makes the server build its watch cache for it (tens of MB for these
	// Pods, in this process's heap), and each peer's first run initialises
	// one-time state (decoders, type caches). One unmeasured sync of each
	// peer takes care of both.
	for _, p := range peers {
		if _, stop, err := p.start(f); err != nil {
			return nil, fmt.Errorf("warm-up of %s: %w", p.name, err)
		} else {
			stop()
		}
	}
	return f, nil
}

func podName(i int) string { return fmt.Sprintf("app-7d9f8b6c5-%05d", i) }

// newPod returns a realistic running Pod of about 1 KiB.
func newPod(i int) *corev1.Pod {
	app := fmt.Sprintf("service-%02d", i%50)
	return &corev1.Pod{
		ObjectMeta: api.ObjectMeta{
			Name:      podName(i),
			Namespace: namespace,
			Labels: map[string]string{
				"app.kubernetes.io/name":      app,
				"app.kubernetes.io/component": "backend",
				"app.kubernetes.io/version":   "v1.4.2",
				"pod-template-hash":           "7d9f8b6c5",
			},
			Annotations: map[string]string{"prometheus.io/scrape": "true"},
		},
		Spec: corev1.PodSpec{
			NodeName:           fmt.Sprintf("node-%03d", i%100),
			ServiceAccountName: "default",
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "registry.example.com/platform/" + app + ":v1.4.2",
				Args:  []string{"--config=/etc/app/config.yaml", "--log-level=info"},
				Ports: []corev1.ContainerPort{
					{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
					{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP},
				},
				Env: []corev1.EnvVar{
					{Name: "APP_NAME", Value: app},
					{Name: "APP_ENV", Value: "production"},
					{Name: "GOMAXPROCS", Value: "2"},
					{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: "http://otel-collector.observability:4317"},
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{"cpu": api.MustParseQuantity("100m"), "memory": api.MustParseQuantity("128Mi")},
					Limits:   corev1.ResourceList{"cpu": api.MustParseQuantity("500m"), "memory": api.MustParseQuantity("256Mi")},
				},
			}},
		},
	}
}

// createPods creates podCount Pods with createConns workers, then sets their
// status to Running through the status subresource (the main endpoint ignores
// status).
func createPods(ctx context.Context, c *client.Client) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, createConns)
	for range createConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= podCount {
					return
				}
				p := newPod(i)
				if err := c.Create(ctx, p); err != nil {
					errs <- fmt.Errorf("create pod %d: %w", i, err)
					return
				}
				start := api.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
				p.Status = corev1.PodStatus{
					Phase:     corev1.PodRunning,
					HostIP:    fmt.Sprintf("10.0.%d.%d", i%100/250, i%100+1),
					PodIP:     fmt.Sprintf("10.244.%d.%d", i/250, i%250+1),
					StartTime: &start,
					QOSClass:  "Burstable",
				}
				if err := c.Status().Update(ctx, p); err != nil {
					errs <- fmt.Errorf("update status of pod %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// heapAlloc returns the live heap after two full collections.
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// peer runs one informer on all Pods until it has synced. It returns the
// number of cached objects and a stop function that ends the informer and
// waits for it.
type peer struct {
	name  string
	start func(f *fixture) (n func() int, stop func(), err error)
}

var peers = []peer{
	{"converge", startConverge},
	{"clientgo", startClientGo},
}

func startConverge(f *fixture) (func() int, func(), error) {
	inf, err := cache.NewClientInformer[*corev1.Pod](f.converge, cache.InformerOptions[*corev1.Pod]{})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- inf.Start(ctx) }()
	if !inf.WaitForCacheSync(ctx) {
		cancel()
		return nil, nil, fmt.Errorf("converge informer did not sync: %v", <-done)
	}
	return inf.Store().Len, func() { cancel(); <-done }, nil
}

func startClientGo(f *fixture) (func() int, func(), error) {
	factory := informers.NewSharedInformerFactory(f.clientset, 0)
	inf := factory.Core().V1().Pods().Informer()
	stopCh := make(chan struct{})
	factory.Start(stopCh)
	for typ, ok := range factory.WaitForCacheSync(stopCh) {
		if !ok {
			close(stopCh)
			return nil, nil, fmt.Errorf("client-go informer for %v did not sync", typ)
		}
	}
	n := func() int { return len(inf.GetStore().ListKeys()) }
	return n, func() { close(stopCh); factory.Shutdown() }, nil
}

// BenchmarkInformerSync measures, per peer, the time from starting an informer
// on 10,000 Pods to its cache being synced (ns/op, sync-ms) and the heap it
// retains once synced (heap-MB, MiB).
func BenchmarkInformerSync(b *testing.B) {
	f := getFixture(b)
	for _, p := range peers {
		b.Run(p.name+"/pods10k", func(b *testing.B) {
			var syncTotal time.Duration
			var heapTotal float64
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				base := heapAlloc()
				b.StartTimer()
				t0 := time.Now()
				n, stop, err := p.start(f)
				elapsed := time.Since(t0)
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				after := heapAlloc()
				if got := n(); got != podCount {
					stop()
					b.Fatalf("%s cached %d pods, want %d", p.name, got, podCount)
				}
				stop()
				syncTotal += elapsed
				heapTotal += float64(int64(after)-int64(base)) / (1 << 20)
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(syncTotal.Milliseconds())/float64(b.N), "sync-ms")
			b.ReportMetric(heapTotal/float64(b.N), "heap-MB")
			heapAlloc() // leave the next peer a clean heap
		})
	}
}
