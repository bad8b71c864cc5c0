package peer

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/converge-dev/converge/bench/internal/load"
)

// BenchmarkConvergeCreates is the create phase of BenchmarkKubeAPIServer
// against `converge up --no-node` alone, for profiling: ConfigMap creates
// (~1 KB) at c=64 with client-go, a warm-up slice first. It reports creates/s
// and the server's CPU µs per create; with $PEER_CREATES_PROFILE set to a
// file it writes a CPU profile of the server (/debug/pprof/profile) taken
// over the creates. $PEER_CREATES sets their number (default 20,000).
func BenchmarkConvergeCreates(b *testing.B) {
	convergeBin, _, _ := binaries(b)
	s := &side{server: startConverge(b, convergeBin)}
	prepare(b, s)
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("PEER_CREATES")); err == nil && v > 0 {
		n = v
	}
	if err := load.Run(conc, conc*4, func() error { _, err := createConfigMap(s); return err }); err != nil {
		b.Fatalf("warm-up: %v", err)
	}
	profDone := make(chan struct{})
	if p := os.Getenv("PEER_CREATES_PROFILE"); p != "" {
		go func() {
			defer close(profDone)
			body, err := s.cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", "8").DoRaw(context.Background())
			if err == nil {
				err = os.WriteFile(p, body, 0o644)
			}
			if err != nil {
				b.Errorf("profile: %v", err)
			}
		}()
	} else {
		close(profDone)
	}
	b.ResetTimer()
	var wall, cpu time.Duration
	for range b.N {
		c0, t0 := s.cpu(b), time.Now()
		if err := load.Run(conc, n, func() error { _, err := createConfigMap(s); return err }); err != nil {
			b.Fatalf("creates: %v", err)
		}
		wall += time.Since(t0)
		cpu += s.cpu(b) - c0
	}
	b.StopTimer()
	<-profDone
	total := float64(n * b.N)
	b.ReportMetric(total/wall.Seconds(), "creates/s")
	b.ReportMetric(float64(cpu.Microseconds())/total, "cpu-us/create")
	b.ReportMetric(0, "ns/op")
}
