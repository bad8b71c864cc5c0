package peer

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/bench/internal/load"
)

// BenchmarkConvergeMemory is the memory half of BenchmarkKubeAPIServer
// without the peer, to iterate on quickly: `converge up --no-node` with the
// same 10,000 pods stored (c=64), then its RSS, the live heap after a forced
// GC (go_memstats_heap_alloc_bytes right after /debug/pprof/heap?gc=1) and the
// CPU per stored pod. MEMPROFILE=path saves that heap profile;
// MEMORY_LIMIT and KEEP_IDLE_MEMORY as in startConverge.
func BenchmarkConvergeMemory(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "converge")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/converge")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/converge: %v\n%s", err, out)
	}
	s := &side{server: startConverge(b, bin)}
	prepare(b, s)
	b.ResetTimer()
	for range b.N {
		c0, t0 := s.cpu(b), time.Now()
		if err := load.Run(conc, storedPods, func() error { return createPod(s) }); err != nil {
			b.Fatalf("store pods: %v", err)
		}
		cpu, wall := s.cpu(b)-c0, time.Since(t0)
		time.Sleep(2 * time.Second)
		rss := s.rss(b)
		prof, err := s.cs.RESTClient().Get().AbsPath("/debug/pprof/heap").Param("gc", "1").DoRaw(context.Background())
		if err != nil {
			b.Fatalf("heap profile: %v", err)
		}
		if p := os.Getenv("MEMPROFILE"); p != "" {
			if err := os.WriteFile(p, prof, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		live := metric(b, s, "go_memstats_heap_alloc_bytes")
		t1 := time.Now()
		listPods(b, s)
		list := time.Since(t1)
		b.ReportMetric(float64(rss)/(1<<20), "rss-MB")
		b.ReportMetric(live/(1<<20), "heap-live-MB")
		b.ReportMetric(float64(cpu.Microseconds())/storedPods, "cpu-µs/pod")
		b.ReportMetric(float64(list.Milliseconds()), "list-ms")
		b.Logf("RSS %.0f MB, live heap %.0f MB, %.0f µs CPU per pod stored (%.0f pods/s), LIST %v",
			float64(rss)/(1<<20), live/(1<<20), float64(cpu.Microseconds())/storedPods, storedPods/wall.Seconds(), list)
		mb := func(name string) float64 { return metric(b, s, name) / (1 << 20) }
		b.Logf("status: %s; after the GC: heap sys %.0f MB, idle %.0f MB, released %.0f MB, next GC at %.0f MB",
			procStatus(b, s.pids[0], "RssAnon", "RssFile"), mb("go_memstats_heap_sys_bytes"), mb("go_memstats_heap_idle_bytes"),
			mb("go_memstats_heap_released_bytes"), mb("go_memstats_next_gc_bytes"))
		b.Logf("stacks %.1f MB (%.0f goroutines), runtime other: mspan %.1f, mcache %.1f, buckhash %.1f, gc sys %.1f, other sys %.1f MB",
			mb("go_memstats_stack_inuse_bytes"), metric(b, s, "go_goroutines"), mb("go_memstats_mspan_inuse_bytes"),
			mb("go_memstats_mcache_inuse_bytes"), mb("go_memstats_buck_hash_sys_bytes"), mb("go_memstats_gc_sys_bytes"),
			mb("go_memstats_other_sys_bytes"))
		b.Logf("mappings by RSS: %s", smapsByMapping(b, s.pids[0]))
	}
}

// smapsByMapping sums /proc/PID/smaps' Rss per mapped file (anonymous
// mappings as "[anon]") and returns the largest, as "name MB" pairs.
func smapsByMapping(tb testing.TB, pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		tb.Fatal(err)
	}
	kb := map[string]int{}
	var cur string
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			cur = "[anon]"
			if len(f) >= 6 {
				cur = filepath.Base(f[5])
			}
		case len(f) == 3 && f[0] == "Rss:":
			n, _ := strconv.Atoi(f[1])
			kb[cur] += n
		}
	}
	var out []string
	for name, n := range kb {
		if n >= 1024 {
			out = append(out, fmt.Sprintf("%s %.1f", name, float64(n)/1024))
		}
	}
	return strings.Join(out, ", ")
}

// procStatus returns the named lines of /proc/PID/status.
func procStatus(tb testing.TB, pid int, names ...string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for line := range strings.SplitSeq(string(b), "\n") {
		for _, n := range names {
			if strings.HasPrefix(line, n+":") {
				out = append(out, strings.Join(strings.Fields(line), " "))
			}
		}
	}
	return strings.Join(out, ", ")
}

// metric reads one unlabelled gauge from the server's /metrics.
func metric(tb testing.TB, s *side, name string) float64 {
	body, err := s.cs.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		tb.Fatalf("metrics: %v", err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				tb.Fatalf("metric %s: %v", name, err)
			}
			return f
		}
	}
	tb.Fatal(fmt.Sprintf("metric %s not in /metrics", name))
	return 0
}
