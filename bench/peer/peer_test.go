package peer

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/converge-dev/converge/bench/internal/load"
)

// The load, the same for both servers.
const (
	conc         = 64     // concurrent clients of the create and store phases
	createSlices = 10     // alternating slices of ConfigMap creates per server
	perSlice     = 2000   // creates per slice
	storedPods   = 10_000 // pods stored before RSS and LIST are measured
	listRounds   = 5      // LISTs of all pods per server (alternating); the median counts
	watchers     = 1000   // watchers of the fan-out
	fanRounds    = 3      // events sent to all watchers per server (alternating); the median counts
)

// side is a server under load and what was measured on it.
type side struct {
	*server
	cs                  *kubernetes.Clientset
	createWall, cpuUsed time.Duration
	latencies           []time.Duration
	lists, fanouts      []time.Duration
	rssBytes            int64
	watchEvents         chan time.Time
	stopWatch           context.CancelFunc
	createdPods, seqCMs atomic.Int64
}

// BenchmarkKubeAPIServer compares the default Converge control plane
// (`converge up --no-node`: HTTPS, client certificates, RBAC, admission,
// controllers and scheduler on embedded etcd, one process) with
// kube-apiserver v1.34 (TLS, client certificates, RBAC, its default admission)
// on its own etcd with Converge's embedded-etcd settings (peeretcd), both
// reached with client-go's transport from a kubeconfig (HTTP/2, a
// system:masters client certificate), under the same load in one run:
//
//   - 10,000 pods stored (c=64), then the RSS of each server's processes;
//   - a LIST of the 10,000 pods (raw JSON body read, median of 5);
//   - one ConfigMap ADDED event reaching 1,000 watchers (median of 3);
//   - ConfigMap creates (~1 KB) at c=64 in 10 alternating slices: creates/s,
//     process CPU per create (API server + etcd), p99 latency.
//
// Ratios are Converge ÷ kube-apiserver except list-speedup and fanout-speedup
// (kube-apiserver's time ÷ Converge's). It also logs each side's RSS before
// the pods and every 250ms until RSS is read, and its CPU per create over the
// whole create phase (the other side's slices included). Run it with
// -benchtime 1x.
func BenchmarkKubeAPIServer(b *testing.B) {
	sides, l1 := startSides(b)
	b.ResetTimer()
	for range b.N {
		for _, s := range sides {
			b.Logf("%s before the pods: RSS %.0f MB", s.name, float64(s.rss(b))/(1<<20))
		}
		// Store the pods in alternating chunks.
		for chunk := range 10 {
			for _, s := range sides {
				if err := load.Run(conc, storedPods/10, func() error { return createPod(s) }); err != nil {
					b.Fatalf("%s: store pods (chunk %d): %v", s.name, chunk, err)
				}
			}
		}
		// RSS is read 2s after the last pod; the figures every 250ms
		// before show when each server settled.
		settle := make([][]string, len(sides))
		for range 8 {
			time.Sleep(250 * time.Millisecond)
			for i, s := range sides {
				settle[i] = append(settle[i], fmt.Sprintf("%.0f", float64(s.rss(b))/(1<<20)))
			}
		}
		for i, s := range sides {
			b.Logf("%s RSS MB every 250ms after the last pod: %s", s.name, strings.Join(settle[i], " "))
			s.rssBytes = s.rss(b)
			for _, pid := range s.pids {
				b.Logf("%s pid %d: %s", s.name, pid, procStatus(b, pid, "VmRSS", "RssAnon", "RssFile"))
			}
		}
		for range listRounds {
			for _, s := range sides {
				s.lists = append(s.lists, listPods(b, s))
			}
		}
		for _, s := range sides {
			startWatchers(b, s)
		}
		time.Sleep(time.Second)
		for r := range fanRounds {
			for _, s := range sides {
				s.fanouts = append(s.fanouts, fanOut(b, s, r))
			}
		}
		for _, s := range sides {
			s.stopWatch()
		}
		// Creates: a warm-up slice each, then alternating measured slices.
		for _, s := range sides {
			if err := load.Run(conc, conc*4, func() error { _, err := createConfigMap(s); return err }); err != nil {
				b.Fatalf("%s: warm-up: %v", s.name, err)
			}
		}
		// CPU over the whole phase too: what a server does while the other
		// side's slice runs (idle work, a GC it deferred) is in neither
		// side's slices.
		phase0 := make([]time.Duration, len(sides))
		for i, s := range sides {
			phase0[i] = s.cpu(b)
		}
		for range createSlices {
			for _, s := range sides {
				var mu sync.Mutex
				lat := make([]time.Duration, 0, perSlice)
				c0, t0 := s.cpu(b), time.Now()
				err := load.Run(conc, perSlice, func() error {
					d, err := createConfigMap(s)
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
					return err
				})
				if err != nil {
					b.Fatalf("%s: creates: %v", s.name, err)
				}
				s.createWall += time.Since(t0)
				s.cpuUsed += s.cpu(b) - c0
				s.latencies = append(s.latencies, lat...)
			}
		}
		for i, s := range sides {
			b.Logf("%s: %.0f µs CPU/create over the whole create phase (the other side's slices included), %.0f in its own slices",
				s.name, float64((s.cpu(b)-phase0[i]).Microseconds())/(createSlices*perSlice),
				float64(s.cpuUsed.Microseconds())/(createSlices*perSlice))
		}
	}
	b.StopTimer()
	report(b, sides, l1)
}

// startSides starts both servers, connects client-go to each and prepares
// their namespaces; it returns them (Converge first) and the load average.
func startSides(b *testing.B) ([]*side, float64) {
	convergeBin, etcdBin, kasBin := binaries(b)
	loadavg, _ := os.ReadFile("/proc/loadavg")
	b.Logf("load average at start: %s", strings.TrimSpace(string(loadavg)))
	var l1 float64
	fmt.Sscan(string(loadavg), &l1)
	sides := []*side{{server: startConverge(b, convergeBin)}, {server: startKubeAPIServer(b, etcdBin, kasBin)}}
	for _, s := range sides {
		prepare(b, s)
	}
	return sides, l1
}

func report(b *testing.B, sides []*side, load1 float64) {
	short := map[string]string{"converge": "converge", "kube-apiserver": "kas"}
	type figures struct{ creates, cpuUS, p99MS, listMS, fanMS, rssMB float64 }
	var f [2]figures
	for i, s := range sides {
		total := float64(len(s.latencies))
		slices.Sort(s.latencies)
		f[i] = figures{
			creates: total / s.createWall.Seconds(),
			cpuUS:   float64(s.cpuUsed.Microseconds()) / total,
			p99MS:   ms(s.latencies[int(0.99*total)]),
			listMS:  ms(median(s.lists)),
			fanMS:   ms(median(s.fanouts)),
			rssMB:   float64(s.rssBytes) / (1 << 20),
		}
		n := short[s.name]
		b.ReportMetric(f[i].creates, n+"-creates/s")
		b.ReportMetric(f[i].cpuUS, n+"-cpu-us/create")
		b.ReportMetric(f[i].p99MS, n+"-p99-ms")
		b.ReportMetric(f[i].listMS, n+"-list-ms")
		b.ReportMetric(f[i].fanMS, n+"-fanout-ms")
		b.ReportMetric(f[i].rssMB, n+"-rss-MB")
		b.Logf("%s: %.0f creates/s, %.0f µs CPU/create, p99 %.1f ms, LIST %.0f ms %v, fan-out %.0f ms %v, RSS %.0f MB",
			s.name, f[i].creates, f[i].cpuUS, f[i].p99MS, f[i].listMS, s.lists, f[i].fanMS, s.fanouts, f[i].rssMB)
	}
	b.ReportMetric(f[0].creates/f[1].creates, "creates-ratio")
	b.ReportMetric(f[0].cpuUS/f[1].cpuUS, "cpu-ratio")
	b.ReportMetric(f[0].p99MS/f[1].p99MS, "p99-ratio")
	b.ReportMetric(f[1].listMS/f[0].listMS, "list-speedup")
	b.ReportMetric(f[1].fanMS/f[0].fanMS, "fanout-speedup")
	b.ReportMetric(f[0].rssMB/f[1].rssMB, "rss-ratio")
	b.ReportMetric(load1, "load1")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// prepare connects to s and creates the namespaces of the load and their
// default ServiceAccounts (kube-apiserver runs without a controller manager to
// create them, and its ServiceAccount admission requires them for pods).
func prepare(tb testing.TB, s *side) {
	var err error
	if s.cs, err = kubernetes.NewForConfig(s.config); err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	for _, ns := range []string{"bench", "list", "fan"} {
		_, err = s.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			tb.Fatalf("%s: create namespace %s: %v", s.name, ns, err)
		}
		_, err = s.cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			tb.Fatalf("%s: create ServiceAccount %s/default: %v", s.name, ns, err)
		}
	}
}

// createPod stores a pod that no scheduler takes (schedulerName of nobody).
func createPod(s *side) error {
	_, err := s.cs.CoreV1().Pods("list").Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%05d", s.createdPods.Add(1)), Labels: map[string]string{"app": "bench"}},
		Spec: corev1.PodSpec{SchedulerName: "bench-nobody", Containers: []corev1.Container{{
			Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}}},
	}, metav1.CreateOptions{})
	return err
}

var payload = strings.Repeat("x", 1000)

func createConfigMap(s *side) (time.Duration, error) {
	t0 := time.Now()
	_, err := s.cs.CoreV1().ConfigMaps("bench").Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", s.seqCMs.Add(1))}, Data: map[string]string{"k": payload}}, metav1.CreateOptions{})
	return time.Since(t0), err
}

// listPods times one LIST of all pods in "list", the JSON body read whole.
func listPods(tb testing.TB, s *side) time.Duration {
	t0 := time.Now()
	body, err := s.cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/list/pods").
		SetHeader("Accept", "application/json").DoRaw(context.Background())
	d := time.Since(t0)
	if err != nil {
		tb.Fatalf("%s: list pods: %v", s.name, err)
	}
	if n := strings.Count(string(body), `"uid":`); n < storedPods {
		tb.Fatalf("%s: list pods returned %d bytes, fewer than %d pods", s.name, len(body), storedPods)
	}
	return d
}

// startWatchers opens the watchers on ConfigMaps in "fan"; each sends the
// time it received an ADDED event to s.watchEvents.
func startWatchers(tb testing.TB, s *side) { startWatchersN(tb, s, fanRounds) }

// startWatchersN is startWatchers for a given number of events.
func startWatchersN(tb testing.TB, s *side, events int) {
	ctx, cancel := context.WithCancel(context.Background())
	s.stopWatch = cancel
	s.watchEvents = make(chan time.Time, watchers*events)
	list, err := s.cs.CoreV1().ConfigMaps("fan").List(ctx, metav1.ListOptions{})
	if err != nil {
		tb.Fatalf("%s: list before watch: %v", s.name, err)
	}
	var opened atomic.Int64
	err = load.Run(32, watchers, func() error {
		w, err := s.cs.CoreV1().ConfigMaps("fan").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			return err
		}
		opened.Add(1)
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				if ev.Type == watch.Added {
					s.watchEvents <- time.Now()
				}
			}
		}()
		return nil
	})
	if err != nil {
		tb.Fatalf("%s: open %d watchers (%d opened): %v", s.name, watchers, opened.Load(), err)
	}
}

// fanOut creates one ConfigMap and returns the time until all watchers
// received it.
func fanOut(tb testing.TB, s *side, round int) time.Duration {
	t0 := time.Now()
	_, err := s.cs.CoreV1().ConfigMaps("fan").Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fan-%d", round)}, Data: map[string]string{"k": payload}}, metav1.CreateOptions{})
	if err != nil {
		tb.Fatalf("%s: create for fan-out: %v", s.name, err)
	}
	var last time.Time
	timeout := time.After(time.Minute)
	for i := range watchers {
		select {
		case last = <-s.watchEvents:
		case <-timeout:
			tb.Fatalf("%s: %d of %d watchers received the event in a minute", s.name, i, watchers)
		}
	}
	return last.Sub(t0)
}
