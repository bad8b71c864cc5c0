package secure

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/converge-dev/converge/bench/internal/load"
	"github.com/converge-dev/converge/controlplane"
)

// clientGoConfig is client-go's configuration for cp with cluster-admin rights
// (the client certificate of a system:masters user when cp is secure).
func clientGoConfig(tb testing.TB, cp *controlplane.ControlPlane) *rest.Config {
	tb.Helper()
	c, err := cp.ClientConfig("bench")
	if err != nil {
		tb.Fatal(err)
	}
	return &rest.Config{Host: c.Host, QPS: -1, TLSClientConfig: rest.TLSClientConfig{
		CAData: c.TLS.CAData, CertData: c.TLS.CertData, KeyData: c.TLS.KeyData}}
}

func start(tb testing.TB, secure, fsync bool) *controlplane.ControlPlane {
	tb.Helper()
	cp, err := controlplane.Start(context.Background(), controlplane.Options{DataDir: tb.TempDir(), Secure: secure, NoFsync: !fsync, CompactionInterval: -1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cp.Close() })
	return cp
}

// TestClientGoUsesHTTP2 checks that client-go's transport, built from a
// kubeconfig-like configuration, negotiates HTTP/2 with the secure server and
// multiplexes concurrent requests on one connection.
func TestClientGoUsesHTTP2(t *testing.T) {
	cp := start(t, true, false)
	rt, err := rest.TransportFor(clientGoConfig(t, cp))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: rt}
	var wg sync.WaitGroup
	var protos sync.Map
	for range 32 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, cp.URL()+"/api/v1/namespaces/default/configmaps", nil)
			resp, err := hc.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status %d", resp.StatusCode)
			}
			protos.Store(resp.Proto+" "+resp.TLS.NegotiatedProtocol, true)
		})
	}
	wg.Wait()
	protos.Range(func(k, _ any) bool {
		if k != "HTTP/2.0 h2" {
			t.Errorf("a request used %v, want HTTP/2.0 over h2", k)
		}
		return true
	})
}

// BenchmarkSecureCreateClientGo creates ConfigMaps (~1 KB) at concurrency 64
// with client-go's typed clientset against the secure server and an insecure
// one, and puts the same bytes into the secure server's etcd (gRPC), fsync on,
// in ten alternating slices. It reports creates/s and process CPU per create
// of each side and the ratios secure ÷ insecure and secure ÷ etcd.
func BenchmarkSecureCreateClientGo(b *testing.B) {
	secure, insecure := start(b, true, true), start(b, false, true)
	var seq atomic.Int64
	payload := strings.Repeat("x", 1000)
	create := func(cp *controlplane.ControlPlane) func() error {
		cs, err := kubernetes.NewForConfig(clientGoConfig(b, cp))
		if err != nil {
			b.Fatal(err)
		}
		return func() error {
			_, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", seq.Add(1))}, Data: map[string]string{"k": payload}}, metav1.CreateOptions{})
			return err
		}
	}
	put := func() error {
		name := fmt.Sprintf("raw-%d", seq.Add(1))
		_, err := secure.EtcdClient().Put(context.Background(), "/bench/raw/"+name,
			fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":%q}}`, name, payload))
		return err
	}
	compareSecure(b, create(secure), create(insecure), put)
}

// compareSecure runs secure and insecure creates and raw etcd puts at
// concurrency 64 in alternating slices and reports the ratios secure ÷
// insecure, secure ÷ etcd and insecure ÷ etcd of their rates.
func compareSecure(b *testing.B, secure, insecure, put func() error) {
	sides := []side{{name: "secure", op: secure}, {name: "insecure", op: insecure}, {name: "etcd", op: put}}
	alternate(b, sides, 64)
	b.ReportMetric(sides[1].wall.Seconds()/sides[0].wall.Seconds(), "secure/insecure")
	b.ReportMetric(sides[2].wall.Seconds()/sides[0].wall.Seconds(), "secure/etcd")
	b.ReportMetric(sides[2].wall.Seconds()/sides[1].wall.Seconds(), "insecure/etcd")
}

// side is one operation of an alternating benchmark and what it took.
type side struct {
	name      string
	op        func() error
	wall, cpu time.Duration
}

// alternate warms each side up, then runs b.N operations of each at
// concurrency conc in ten alternating slices (so that changing load weighs
// on all sides alike), adding up each side's wall and process CPU time, and
// reports each side's operations/s and CPU µs per operation.
func alternate(b *testing.B, sides []side, conc int) {
	const slices = 10
	n := max(b.N/slices, conc)
	for i := range sides {
		if err := load.Run(conc, conc, sides[i].op); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range slices {
		for i := range sides {
			c0, t0 := cpuTime(), time.Now()
			if err := load.Run(conc, n, sides[i].op); err != nil {
				b.Fatal(err)
			}
			sides[i].wall += time.Since(t0)
			sides[i].cpu += cpuTime() - c0
		}
	}
	total := float64(n * slices)
	for _, s := range sides {
		b.ReportMetric(total/s.wall.Seconds(), s.name+"-ops/s")
		b.ReportMetric(float64(s.cpu.Microseconds())/total, s.name+"-cpu-us/op")
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSecureApplyClientGo measures, on the default secure server through
// client-go's typed clientset (HTTP/2, protobuf where client-go uses it), a
// server-side apply of a ConfigMap (~1 KB) that changes nothing against a GET
// of the same object, at concurrency 16 in ten alternating slices. It reports
// each side's requests/s and process CPU per request (client-go, both TLS
// ends and the server: everything runs in this process) and the ratio apply
// ÷ GET of CPU per request (issue 23's goal: an unchanged apply costs ≤ 1.5×
// a GET), and checks that the applies committed nothing.
func BenchmarkSecureApplyClientGo(b *testing.B) {
	cp := start(b, true, true)
	cs, err := kubernetes.NewForConfig(clientGoConfig(b, cp))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps("default")
	data := map[string]string{"k": strings.Repeat("x", 1000)}
	apply := func() error {
		_, err := cms.Apply(ctx, corev1ac.ConfigMap("applied", "default").WithLabels(map[string]string{"app": "bench"}).WithData(data),
			metav1.ApplyOptions{FieldManager: "bench"})
		return err
	}
	if err := apply(); err != nil {
		b.Fatal(err)
	}
	first, err := cms.Get(ctx, "applied", metav1.GetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	get := func() error {
		_, err := cms.Get(ctx, "applied", metav1.GetOptions{})
		return err
	}
	sides := []side{{name: "apply", op: apply}, {name: "get", op: get}}
	alternate(b, sides, 16)
	b.StopTimer()
	last, err := cms.Get(ctx, "applied", metav1.GetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if last.ResourceVersion != first.ResourceVersion {
		b.Fatalf("unchanged applies committed: resourceVersion %s -> %s", first.ResourceVersion, last.ResourceVersion)
	}
	b.ReportMetric(sides[0].cpu.Seconds()/sides[1].cpu.Seconds(), "apply/get-cpu")
}
