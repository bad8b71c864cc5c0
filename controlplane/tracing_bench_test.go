package controlplane_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/tracing"
	"github.com/converge-dev/converge/framework/tracing/otlptest"
)

// BenchmarkTracingCost compares ConfigMap creates at concurrency 64 through
// four default (secure) control planes in one process: tracing off, tracing
// on with sampling 0, with every request sampled, and with every request
// sampled through the OpenTelemetry SDK (--tracing-sdk=otel; spans exported over
// OTLP/gRPC to a receiver in another process, as a collector is), in 40
// rounds of alternating sides. It reports creates/s and process CPU per create
// of each, the CPU cost of tracing relative to off (goals: ≤ 2 % at sampling
// 0, ≤ 10 % at 1.0) over the whole run and its median over the rounds (less
// sensitive to a burst of load from outside), spans per sampled create and the receiver's own CPU per span (not
// the control plane's cost, so not in the ratios; session 13's figures had the
// receiver in the measured process).
//
//	go test -run '^$' -bench BenchmarkTracingCost -benchtime 20000x ./controlplane/
func BenchmarkTracingCost(b *testing.B) {
	ctx := context.Background()
	rcv := startSink(b)
	start := func(t tracing.Config) *controlplane.ControlPlane {
		cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: b.TempDir(), Secure: true, CompactionInterval: -1, Tracing: t})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cp.Close() })
		return cp
	}
	var seq atomic.Int64
	payload := strings.Repeat("x", 1000)
	body := func(prefix string) (string, []byte) {
		name := fmt.Sprintf("%s-%d", prefix, seq.Add(1))
		return name, fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":%q}}`, name, payload)
	}
	sides := []benchSide{
		{name: "off", op: restConfigMapCreate(b, start(tracing.Config{}), body)},
		{name: "sampled0", op: restConfigMapCreate(b, start(tracing.Config{Endpoint: rcv.Addr()}), body)},
		{name: "sampled1", op: restConfigMapCreate(b, start(tracing.Config{Endpoint: rcv.Addr(), SamplingRatePerMillion: 1_000_000}), body)},
		{name: "sampled1-otelsdk", op: restConfigMapCreate(b, start(tracing.Config{Endpoint: rcv.Addr(), SamplingRatePerMillion: 1_000_000, SDK: tracing.SDKOTel}), body)},
	}
	const rounds, conc = 40, 64
	n := max(b.N/rounds, conc)
	for i := range sides {
		run(nil, conc, conc, sides[i].op)
	}
	b.ResetTimer()
	// Side after side in short rounds, each round starting with the next
	// side, so that load from outside and the work one side leaves behind
	// (GC, an export in flight) fall on every side alike; per round, each
	// side's CPU relative to off's.
	perRound := make([][]float64, len(sides))
	for r := range rounds {
		cpu := make([]time.Duration, len(sides))
		for k := range sides {
			i := (r + k) % len(sides)
			c0, t0 := cpuTime(), time.Now()
			run(nil, conc, n, sides[i].op)
			sides[i].wall += time.Since(t0)
			cpu[i] = cpuTime() - c0
			sides[i].cpu += cpu[i]
		}
		for i := range sides {
			perRound[i] = append(perRound[i], 100*(cpu[i].Seconds()/cpu[0].Seconds()-1))
		}
	}
	b.StopTimer()
	total := float64(n * rounds)
	for _, s := range sides {
		b.ReportMetric(total/s.wall.Seconds(), s.name+"-ops/s")
		b.ReportMetric(float64(s.cpu.Microseconds())/total, s.name+"-cpu-us/op")
	}
	for i, s := range sides[1:] {
		b.ReportMetric(100*(s.cpu.Seconds()/sides[0].cpu.Seconds()-1), s.name+"-cpu-%")
		r := slices.Clone(perRound[i+1])
		slices.Sort(r)
		b.ReportMetric(r[len(r)/2], s.name+"-cpu-%-median")
	}
	// The batch span processor exports within a few seconds.
	var spans int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if spans = rcv.spans(b); spans >= 2*int(total) {
			break
		}
	}
	if spans < 2*int(total) {
		b.Fatalf("the two sampled control planes exported %d spans for %.0f creates each", spans, total)
	}
	b.ReportMetric(float64(spans)/(2*(total+float64(conc))), "spans/sampled-create")
	b.ReportMetric(float64(rcv.cpu(b).Microseconds())/float64(spans), "receiver-cpu-us/span")
}

// TestOTLPSinkProcess is BenchmarkTracingCost's OTLP receiver, run as a
// process of its own (the test binary again, with CONVERGE_OTLP_SINK=1): it
// prints its address, then the number of spans received for every line it
// reads, until its input closes. Without the variable it does nothing.
func TestOTLPSinkProcess(t *testing.T) {
	if os.Getenv("CONVERGE_OTLP_SINK") != "1" {
		return
	}
	rcv := otlptest.Start(t)
	fmt.Println(rcv.Addr())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		fmt.Println(len(rcv.Spans()))
	}
}

// sink is an OTLP receiver in a child process (TestOTLPSinkProcess).
type sink struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	addr string
}

func startSink(b *testing.B) *sink {
	cmd := exec.Command(os.Args[0], "-test.run=^TestOTLPSinkProcess$")
	cmd.Env = append(os.Environ(), "CONVERGE_OTLP_SINK=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("start the OTLP receiver process: %v", err)
	}
	s := &sink{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	b.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	if !s.out.Scan() {
		b.Fatalf("the OTLP receiver process printed no address: %v", s.out.Err())
	}
	s.addr = strings.TrimSpace(s.out.Text())
	return s
}

// Addr is the receiver's address.
func (s *sink) Addr() string { return s.addr }

// spans is the number of spans the receiver has received.
func (s *sink) spans(b *testing.B) int {
	if _, err := fmt.Fprintln(s.in, "count"); err != nil {
		b.Fatalf("ask the OTLP receiver: %v", err)
	}
	if !s.out.Scan() {
		b.Fatalf("the OTLP receiver process answered nothing: %v", s.out.Err())
	}
	n, err := strconv.Atoi(strings.TrimSpace(s.out.Text()))
	if err != nil {
		b.Fatalf("the OTLP receiver process answered %q", s.out.Text())
	}
	return n
}

// cpu is the receiver process's CPU time so far (user and system, from
// /proc/PID/stat in clock ticks of 10 ms).
func (s *sink) cpu(b *testing.B) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		b.Fatalf("read the OTLP receiver's CPU time: %v", err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
