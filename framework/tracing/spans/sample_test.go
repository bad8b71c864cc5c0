package spans

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TestSamplerAgainstSDK checks our decisions against sdktrace's
// ParentBased(TraceIDRatioBased) for the same trace IDs and ratios: random
// IDs, the IDs on either side of each ratio's threshold, and every kind of
// parent.
func TestSamplerAgainstSDK(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 2))
	parents := map[string]trace.SpanContext{"none": {}}
	for _, remote := range []bool{false, true} {
		for _, flags := range []trace.TraceFlags{0, trace.FlagsSampled} {
			sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: flags, Remote: remote})
			parents[map[bool]string{true: "remote", false: "local"}[remote]+map[trace.TraceFlags]string{0: " unsampled", 1: " sampled"}[flags]] = sc
		}
	}
	for _, perMillion := range []int{0, 1, 10, 1000, 123_456, 500_000, 999_999, 1_000_000} {
		ratio := float64(perMillion) / 1e6
		ours, sdk := newSampler(ratio), sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))
		var ids []trace.TraceID
		for range 2000 {
			var tid trace.TraceID
			binary.BigEndian.PutUint64(tid[:8], rnd.Uint64())
			binary.BigEndian.PutUint64(tid[8:], rnd.Uint64())
			ids = append(ids, tid)
		}
		bound := uint64(ratio * (1 << 63))
		for _, low := range []uint64{0, 1, bound<<1 - 2, bound<<1 - 1, bound << 1, bound<<1 | 1, bound<<1 + 2, ^uint64(0)} {
			var tid trace.TraceID
			tid[0] = 0xab
			binary.BigEndian.PutUint64(tid[8:], low)
			ids = append(ids, tid)
		}
		sampledRoots := 0
		for name, psc := range parents {
			for _, tid := range ids {
				ctx := trace.ContextWithSpanContext(context.Background(), psc)
				want := sdk.ShouldSample(sdktrace.SamplingParameters{ParentContext: ctx, TraceID: tid}).Decision == sdktrace.RecordAndSample
				if got := ours.sampled(psc, tid); got != want {
					t.Fatalf("ratio %g, parent %s, trace %s: sampled %v, the SDK %v", ratio, name, tid, got, want)
				}
				if name == "none" && want {
					sampledRoots++
				}
			}
		}
		if perMillion == 500_000 && (sampledRoots < 900 || sampledRoots > 1100) {
			t.Errorf("ratio 0.5 sampled %d of %d new traces", sampledRoots, len(ids))
		}
	}
}

func TestIDsValidAndDistinct(t *testing.T) {
	t.Parallel()
	seen := map[trace.SpanID]bool{}
	for range 10000 {
		if tid := newTraceID(); !tid.IsValid() {
			t.Fatal("invalid trace ID")
		}
		sid := newSpanID()
		if !sid.IsValid() || seen[sid] {
			t.Fatalf("span ID %s invalid or repeated", sid)
		}
		seen[sid] = true
	}
}
