package tracing

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/converge-dev/converge/bench/internal/apiproc"
	"github.com/converge-dev/converge/bench/internal/load"
)

// BenchmarkTracingProcesses is issue 24's tracing cost on what users run:
// `converge apiserver` processes of one binary in the default secure mode
// (HTTPS, client certificates, RBAC, admission, embedded etcd), ConfigMap
// creates (~1 KB) through client-go's transport from each kubeconfig, one
// process per side:
//
//   - off, and off2 — a second identical process: its difference from off is
//     the measurement's own noise;
//   - sampled0: --tracing-endpoint with sampling 0;
//   - sampled1: every request sampled (Converge's spans and OTLP encoding);
//   - sampled1-otelsdk: the same with --tracing-sdk=otel.
//
// Each server's CPU time is read from /proc (its threads' run time, to the
// nanosecond), so what one side leaves behind (GC, an export in flight) is
// charged to it and nothing of the load generator's or of the OTLP
// collector's (in this process; it only counts the spans, see countingSink)
// is. The sides take turns in 40 rounds, each round starting with the next
// side. Two loads:
//
//   - saturated: 64 concurrent clients, each sending its next create when
//     the last one is answered. On 2 cores a costlier side also gets fewer
//     creates per second, and the work the server batches (etcd's WAL
//     fsyncs, HTTP/2 writes) is then shared by fewer creates: the CPU per
//     create mixes the cost of tracing with that of the lower throughput.
//   - rate=N (TRACING_BENCH_RATE, default 6,000, which every side sustains
//     here): N creates per second for every side (at most 64 in flight), the
//     same work everywhere: the CPU per create is what tracing adds.
//
// Each reports every side's creates/s and server CPU per create, each traced
// side's CPU cost relative to the mean of off and off2 over the run and the
// median of the per-round costs, off2's difference from off (the noise), and
// the spans exported per sampled create.
//
// CONVERGE_BIN names the binary; by default the working tree's is built.
//
//	cd bench && go test -run '^$' -bench BenchmarkTracingProcesses -benchtime 40000x ./tracing/
func BenchmarkTracingProcesses(b *testing.B) {
	bin := converge(b)
	rcv := startCountingSink(b)
	all := "--tracing-sampling-rate-per-million=1000000"
	sides := []*apiproc.Server{
		apiproc.Start(b, "off", bin),
		apiproc.Start(b, "off2", bin),
		apiproc.Start(b, "sampled0", bin, "--tracing-endpoint", rcv.addr),
		apiproc.Start(b, "sampled1", bin, "--tracing-endpoint", rcv.addr, all),
		apiproc.Start(b, "sampled1-otelsdk", bin, "--tracing-endpoint", rcv.addr, all, "--tracing-sdk=otel"),
	}
	const conc = 64
	var seq atomic.Int64
	payload := strings.Repeat("x", 1000)
	op := func(s *apiproc.Server) func() error {
		return func() error {
			name := fmt.Sprintf("cm-%d", seq.Add(1))
			return s.Create("/api/v1/namespaces/default/configmaps",
				fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":%q}}`, name, payload))
		}
	}
	for _, s := range sides { // warm up
		if err := load.Run(conc, 4*conc, op(s)); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(6 * time.Second) // the warm-up's spans exported (every 5 s)
	b.Run("saturated", func(b *testing.B) {
		measure(b, rcv, sides, func(s *apiproc.Server, n int) error { return load.Run(conc, n, op(s)) })
	})
	rate := 6000.0
	if r := os.Getenv("TRACING_BENCH_RATE"); r != "" {
		if _, err := fmt.Sscan(r, &rate); err != nil {
			b.Fatalf("TRACING_BENCH_RATE=%q: %v", r, err)
		}
	}
	b.Run(fmt.Sprintf("rate=%.0f", rate), func(b *testing.B) {
		measure(b, rcv, sides, func(s *apiproc.Server, n int) error { return load.RunAt(conc, n, rate, op(s)) })
	})
}

// measure runs b.N creates per side with run, in rounds, and reports (see
// BenchmarkTracingProcesses).
func measure(b *testing.B, rcv *countingSink, sides []*apiproc.Server, run func(s *apiproc.Server, n int) error) {
	const rounds = 40
	spans0 := rcv.spans.Load()
	n := max(b.N/rounds, 64)
	wall := make([]time.Duration, len(sides))
	cpu := make([]time.Duration, len(sides))
	perRound := make([][]float64, len(sides))
	b.ResetTimer()
	for r := range rounds {
		round := make([]time.Duration, len(sides))
		for k := range sides {
			i := (r + k) % len(sides)
			c0, t0 := sides[i].Runtime(b), time.Now()
			if err := run(sides[i], n); err != nil {
				b.Fatal(err)
			}
			wall[i] += time.Since(t0)
			round[i] = sides[i].Runtime(b) - c0
			cpu[i] += round[i]
		}
		for i := 2; i < len(sides); i++ {
			perRound[i] = append(perRound[i], cost(round, i))
		}
	}
	b.StopTimer()
	total := float64(n * rounds)
	for i, s := range sides {
		b.ReportMetric(total/wall[i].Seconds(), s.Name+"-creates/s")
		b.ReportMetric(float64(cpu[i].Microseconds())/total, s.Name+"-server-cpu-us/create")
		if i < 2 {
			continue
		}
		b.ReportMetric(cost(cpu, i), s.Name+"-cpu-%")
		r := slices.Clone(perRound[i])
		slices.Sort(r)
		b.ReportMetric(r[len(r)/2], s.Name+"-cpu-%-median")
	}
	b.ReportMetric(100*(cpu[1].Seconds()/cpu[0].Seconds()-1), "off2-cpu-%")
	// Both sampled servers export within their 5 s interval.
	want := 2 * int(total)
	var spans int
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if spans = int(rcv.spans.Load() - spans0); spans >= want {
			break
		}
	}
	if spans < want {
		b.Fatalf("the two sampled servers exported %d spans for %.0f creates each", spans, total)
	}
	b.ReportMetric(float64(spans)/(2*total), "spans/sampled-create")
	b.ReportMetric(apiproc.Load1(), "load1")
	b.ReportMetric(0, "ns/op") // every side's creates in one timer: not a figure
}

// cost is side i's CPU relative to the untraced sides' (0 and 1, off and
// off2: their mean halves the reference's own noise), in percent.
func cost(cpu []time.Duration, i int) float64 {
	return 100 * (2*cpu[i].Seconds()/(cpu[0].Seconds()+cpu[1].Seconds()) - 1)
}

// converge is the binary CONVERGE_BIN names, or the working tree's, built
// into a temporary directory.
func converge(b *testing.B) string {
	if bin := os.Getenv("CONVERGE_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "converge")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/converge")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build converge: %v\n%s", err, out)
	}
	return bin
}
