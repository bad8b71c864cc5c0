package tracing_test

import (
	"context"
	"net/http"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/converge-dev/converge/framework/tracing"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rate int32
		ok   bool
	}{{0, true}, {1, true}, {1_000_000, true}, {-1, false}, {1_000_001, false}} {
		if err := (tracing.Config{Endpoint: "x:4317", SamplingRatePerMillion: tc.rate}).Validate(); (err == nil) != tc.ok {
			t.Errorf("rate %d: Validate() = %v, want ok %v", tc.rate, err, tc.ok)
		}
	}
}

func TestInjectExtractRoundTrip(t *testing.T) {
	t.Parallel()
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("t").Start(context.Background(), "client")
	defer span.End()
	h := http.Header{}
	tracing.Inject(ctx, h)
	if h.Get("Traceparent") == "" {
		t.Fatal("no traceparent sent for a sampled span")
	}
	got := trace.SpanContextFromContext(tracing.Extract(context.Background(), h))
	if got.TraceID() != span.SpanContext().TraceID() || got.SpanID() != span.SpanContext().SpanID() || !got.IsRemote() {
		t.Errorf("extracted %v, want the remote span %v", got, span.SpanContext())
	}

	empty := http.Header{}
	tracing.Inject(context.Background(), empty)
	if len(empty) != 0 {
		t.Errorf("headers %v sent without a span", empty)
	}
	if sc := trace.SpanContextFromContext(tracing.Extract(context.Background(), http.Header{"Traceparent": {"garbage"}})); sc.IsValid() {
		t.Errorf("an invalid traceparent gave span context %v", sc)
	}
}

func TestChild(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, parent := tp.Tracer("t").Start(context.Background(), "request")
	cctx, child := tracing.Child(ctx, "t", "etcd get")
	tracing.End(child, nil)
	parent.End()
	if sc := trace.SpanContextFromContext(cctx); sc.SpanID() == parent.SpanContext().SpanID() {
		t.Error("the child's ctx carries the parent span")
	}
	ended := rec.Ended()
	if len(ended) != 2 || ended[0].Name() != "etcd get" || ended[0].Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("ended spans %v, want etcd get under request", ended)
	}

	// Not traced, or not sampled: nothing is started.
	for name, ctx := range map[string]context.Context{
		"no span": context.Background(),
		"unsampled": func() context.Context {
			never := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSpanProcessor(rec))
			ctx, _ := never.Tracer("t").Start(context.Background(), "request")
			return ctx
		}(),
	} {
		got, span := tracing.Child(ctx, "t", "etcd get")
		if span.IsRecording() || got != ctx {
			t.Errorf("%s: Child started a recording span or changed ctx", name)
		}
	}
}
