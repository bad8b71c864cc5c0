package peer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/trace"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fanoutOnlyRounds is the number of events BenchmarkKubeAPIServerFanout sends
// to each server's watchers (alternating); the median counts.
const fanoutOnlyRounds = 15

// BenchmarkKubeAPIServerFanout is the fan-out part of BenchmarkKubeAPIServer
// alone, without the 10,000 pods and the creates: the same two servers, 1,000
// client-go watchers on ConfigMaps each, one ConfigMap created per round
// (alternating between the servers). Per server: the median time from the
// create to the first, the 500th and the 1,000th delivery, the create's own latency,
// and the server processes' CPU per round (/proc/PID/stat; 10 ms ticks).
// fanout-speedup is kube-apiserver's last-delivery time ÷ Converge's.
func BenchmarkKubeAPIServerFanout(b *testing.B) {
	sides, l1 := startSides(b)
	for _, s := range sides {
		startWatchersN(b, s, fanoutOnlyRounds*b.N)
	}
	time.Sleep(time.Second)
	type figures struct{ created, first, half, last []time.Duration }
	f := make([]figures, len(sides))
	cpu := make([]time.Duration, len(sides))
	profiled := profileDuringFanout(b, sides)
	b.ResetTimer()
	for i := range b.N {
		for r := range fanoutOnlyRounds {
			for k, s := range sides {
				time.Sleep(100 * time.Millisecond)
				c0 := s.cpu(b)
				created, first, half, last := fanOutTimed(b, s, fmt.Sprintf("only-%d-%d", i, r))
				f[k].created = append(f[k].created, created)
				f[k].first = append(f[k].first, first)
				f[k].half = append(f[k].half, half)
				f[k].last = append(f[k].last, last)
				cpu[k] += s.cpu(b) - c0
			}
		}
	}
	b.StopTimer()
	profiled()
	short := map[string]string{"converge": "converge", "kube-apiserver": "kas"}
	for k, s := range sides {
		n := short[s.name]
		b.ReportMetric(ms(median(f[k].created)), n+"-create-ms")
		b.ReportMetric(ms(median(f[k].first)), n+"-first-ms")
		b.ReportMetric(ms(median(f[k].half)), n+"-half-ms")
		b.ReportMetric(ms(median(f[k].last)), n+"-last-ms")
		b.ReportMetric(ms(cpu[k])/float64(len(f[k].last)), n+"-cpu-ms/event")
		b.Logf("%s: create %v, first %v, 500th %v, last %v (medians), CPU %v per event; last: %v", s.name,
			median(f[k].created), median(f[k].first), median(f[k].half), median(f[k].last), cpu[k]/time.Duration(len(f[k].last)), f[k].last)
		s.stopWatch()
	}
	b.ReportMetric(ms(median(f[1].last))/ms(median(f[0].last)), "fanout-speedup")
	b.ReportMetric(l1, "load1")
	b.ReportMetric(0, "ns/op")
}

// profileDuringFanout, when $PEER_FANOUT_PROFILE names a directory, takes a
// CPU profile and an execution trace of each server (/debug/pprof as
// system:masters) over the first seconds of the rounds into
// <dir>/<server>-cpu.pprof and <dir>/<server>.trace, and a trace of this
// process (the watchers) into <dir>/client.trace; the returned function waits
// for them.
func profileDuringFanout(tb testing.TB, sides []*side) func() {
	dir := os.Getenv("PEER_FANOUT_PROFILE")
	if dir == "" {
		return func() {}
	}
	var wg sync.WaitGroup
	f, err := os.Create(filepath.Join(dir, "client.trace"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := trace.Start(f); err != nil {
		tb.Fatal(err)
	}
	wg.Go(func() {
		time.Sleep(3 * time.Second)
		trace.Stop()
		_ = f.Close()
	})
	for _, s := range sides {
		for _, p := range []struct{ path, seconds, file string }{
			{"/debug/pprof/profile", "12", s.name + "-cpu.pprof"},
			{"/debug/pprof/trace", "3", s.name + ".trace"},
		} {
			wg.Go(func() {
				body, err := s.cs.CoreV1().RESTClient().Get().AbsPath(p.path).Param("seconds", p.seconds).DoRaw(context.Background())
				if err == nil {
					err = os.WriteFile(filepath.Join(dir, p.file), body, 0o644)
				}
				if err != nil {
					tb.Errorf("%s: %s: %v", s.name, p.path, err)
				}
			})
		}
	}
	return wg.Wait
}

// fanOutTimed creates one ConfigMap in "fan" and returns the time the create
// took and the times until the first, the 500th and the last watcher
// received it.
func fanOutTimed(tb testing.TB, s *side, name string) (created, first, half, last time.Duration) {
	t0 := time.Now()
	_, err := s.cs.CoreV1().ConfigMaps("fan").Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": payload}}, metav1.CreateOptions{})
	created = time.Since(t0)
	if err != nil {
		tb.Fatalf("%s: create for fan-out: %v", s.name, err)
	}
	timeout := time.After(time.Minute)
	for i := range watchers {
		select {
		case t := <-s.watchEvents:
			if i == 0 {
				first = t.Sub(t0)
			}
			if i == watchers/2-1 {
				half = t.Sub(t0)
			}
			last = t.Sub(t0)
		case <-timeout:
			tb.Fatalf("%s: %d of %d watchers received the event in a minute", s.name, i, watchers)
		}
	}
	return created, first, half, last
}
