package otlp_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/converge-dev/converge/framework/tracing"
	"github.com/converge-dev/converge/framework/tracing/otlpexport"
	"github.com/converge-dev/converge/framework/tracing/spans"
)

// BenchmarkRequestSpans is the tracing of one sampled API request: a server
// span with the API server's 8 attributes and 3 child spans (admission
// admit, admission validate, etcd create), batched and encoded to the bytes
// of an OTLP export request (no network), through our provider and through
// the OpenTelemetry SDK's (sdktrace with its batcher and otlptrace's
// conversion, then proto.Marshal, as otlptracegrpc does). cpu-ns/op counts
// the batcher's goroutine too.
//
//	go test -run '^$' -bench BenchmarkRequestSpans -benchmem ./framework/tracing/otlp/
func BenchmarkRequestSpans(b *testing.B) {
	b.Run("converge", func(b *testing.B) {
		exp := &encoder{}
		tp := spans.New(spans.Options{Sampling: 1, Exporter: exp})
		requestSpans(b, tp, func() { _ = tp.ForceFlush(context.Background()) })
		_ = tp.Shutdown(context.Background())
	})
	b.Run("otelsdk", func(b *testing.B) {
		exp, err := otlptrace.New(context.Background(), &marshaller{})
		if err != nil {
			b.Fatal(err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(sdkresource.NewSchemaless(attribute.String("service.name", "bench"))),
			sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(1))))
		requestSpans(b, tp, func() { _ = tp.ForceFlush(context.Background()) })
		_ = tp.Shutdown(context.Background())
	})
}

func requestSpans(b *testing.B, tp trace.TracerProvider, flush func()) {
	tr := tp.Tracer("converge/apiserver")
	ctx := context.Background()
	server := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	b.ReportAllocs()
	c0 := cpu()
	b.ResetTimer()
	for range b.N {
		rctx, req := tr.Start(ctx, "create configmaps", server...)
		_, admit := tracing.Child(rctx, "converge/apiserver", "admission admit")
		tracing.End(admit, nil)
		_, validate := tracing.Child(rctx, "converge/apiserver", "admission validate")
		tracing.End(validate, nil)
		_, etcd := tracing.Child(rctx, "converge/apiserver", "etcd create", attribute.String("key", "/registry/configmaps/default/"))
		tracing.End(etcd, nil)
		// As the API server sets them: in one call, after the handler.
		attrs := make([]attribute.KeyValue, 0, 8)
		attrs = append(attrs, attribute.String("http.request.method", "POST"), attribute.String("url.path", "/api/v1/namespaces/default/configmaps"),
			attribute.String("user_agent.original", "bench/1.0"), attribute.Int("http.response.status_code", 201),
			attribute.String("k8s.verb", "create"), attribute.String("k8s.resource", "configmaps"),
			attribute.String("k8s.namespace", "default"), attribute.String("k8s.name", ""))
		tracing.SetAttributesOwned(req, attrs)
		req.End()
	}
	flush()
	b.StopTimer()
	b.ReportMetric(float64(cpu()-c0)/float64(b.N), "cpu-ns/op")
}

// cpu is the process's CPU time.
func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// encoder encodes each batch as otlpexport.Exporter does, without sending.
type encoder struct{ buf []byte }

func (e *encoder) Export(_ context.Context, batch []*spans.Span) error {
	e.buf = otlpexport.AppendRequest(e.buf[:0], []attribute.KeyValue{attribute.String("service.name", "bench")}, batch)
	return nil
}

// marshaller marshals what otlptrace converted, as otlptracegrpc's client
// does before sending.
type marshaller struct{}

func (*marshaller) Start(context.Context) error { return nil }
func (*marshaller) Stop(context.Context) error  { return nil }
func (*marshaller) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	_, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rs})
	return err
}
