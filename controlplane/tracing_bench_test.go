package controlplane_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/tracing"
	"github.com/converge-dev/converge/framework/tracing/otlptest"
)

// BenchmarkTracingCost compares ConfigMap creates at concurrency 64 through
// three default (secure) control planes in one process: tracing off, tracing
// on with sampling 0, and with every request sampled (spans exported to an
// in-process OTLP receiver), in alternating slices. It reports creates/s and
// process CPU per create of each, and the CPU cost of tracing relative to off
// (goals: ≤ 2 % at sampling 0, ≤ 10 % at 1.0).
//
//	go test -run '^$' -bench BenchmarkTracingCost -benchtime 20000x ./controlplane/
func BenchmarkTracingCost(b *testing.B) {
	ctx := context.Background()
	rcv := otlptest.Start(b)
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
	}
	const slices, conc = 10, 64
	n := max(b.N/slices, conc)
	for i := range sides {
		run(nil, conc, conc, sides[i].op)
	}
	b.ResetTimer()
	interleave(sides, slices, conc, n)
	b.StopTimer()
	total := float64(n * slices)
	for _, s := range sides {
		b.ReportMetric(total/s.wall.Seconds(), s.name+"-ops/s")
		b.ReportMetric(float64(s.cpu.Microseconds())/total, s.name+"-cpu-us/op")
	}
	b.ReportMetric(100*(sides[1].cpu.Seconds()/sides[0].cpu.Seconds()-1), "sampled0-cpu-%")
	b.ReportMetric(100*(sides[2].cpu.Seconds()/sides[0].cpu.Seconds()-1), "sampled1-cpu-%")
	if len(rcv.Spans()) == 0 {
		b.Fatal("the sampled control plane exported no span")
	}
}
