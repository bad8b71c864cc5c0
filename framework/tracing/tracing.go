// Package tracing sets up OpenTelemetry tracing for Converge's components:
// an OTLP/gRPC exporter, a parent-based sampler with a rate per million (as
// Kubernetes' TracingConfiguration), and the W3C trace context propagation
// that the API server honours on incoming requests and framework/client sends
// on outgoing ones, so that a reconcile and the API calls it makes form one
// trace.
//
// This package is what instrumented code needs (the W3C propagation, child
// tracers); the provider that exports spans is built by tracing/otlp, which
// only the components' entry points import: by default tracing/spans (our
// own implementation of the trace API) with tracing/otlpexport (our own OTLP
// encoding), or the OpenTelemetry SDK with Config.SDK "otel". Nothing is global: a component
// hands its TracerProvider to the API server and the controller manager. A
// zero Config (no endpoint) means a no-op provider.
package tracing

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Config says where spans go and how many traces are sampled.
type Config struct {
	// Endpoint is the OTLP/gRPC collector, host:port (e.g. localhost:4317).
	// Empty disables tracing.
	Endpoint string
	// SamplingRatePerMillion is how many of a million new traces are
	// recorded; a request or reconcile whose caller sampled its trace is
	// always recorded (parent-based sampling, as Kubernetes).
	SamplingRatePerMillion int32
	// SDK chooses the implementation of the trace API: SDKConverge ("",
	// the default: framework/tracing/spans and its OTLP encoder) or SDKOTel
	// (the OpenTelemetry SDK and its OTLP exporter, kept as an escape
	// hatch).
	SDK string
}

// The implementations Config.SDK names.
const (
	SDKConverge = "converge"
	SDKOTel     = "otel"
)

// SDKs lists the values of Config.SDK.
func SDKs() []string { return []string{SDKConverge, SDKOTel} }

// Enabled reports whether c sends spans anywhere.
func (c Config) Enabled() bool { return c.Endpoint != "" }

// Validate checks c.
func (c Config) Validate() error {
	if c.SamplingRatePerMillion < 0 || c.SamplingRatePerMillion > 1_000_000 {
		return fmt.Errorf("tracing: sampling rate per million %d: must be between 0 and 1000000", c.SamplingRatePerMillion)
	}
	if c.SDK != "" && !slices.Contains(SDKs(), c.SDK) {
		return fmt.Errorf("tracing: SDK %q: must be one of %s", c.SDK, strings.Join(SDKs(), ", "))
	}
	return nil
}

// Extract returns ctx with the remote span context of the request's
// traceparent header, if it has a valid one.
func Extract(ctx context.Context, h http.Header) context.Context {
	if h.Get("Traceparent") == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(h))
}

// Inject sets the traceparent (and tracestate) headers of the span in ctx,
// if it has a valid one.
func Inject(ctx context.Context, h http.Header) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
}

// Child starts the span name under the recording span of ctx, with the
// instrumentation scope tracer. When ctx carries none (the entry point is not
// traced, or its trace was not sampled) it returns ctx and a span that does
// nothing, at the cost of a lookup. attrs is not kept: a call's variadic
// array need not be allocated.
func Child(ctx context.Context, tracer, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, trace.SpanFromContext(context.Background())
	}
	if c, ok := parent.(childStarter); ok && (len(attrs) == 0 || len(attrs) == 1 && attrs[0].Valid()) {
		var attr attribute.KeyValue
		if len(attrs) == 1 {
			attr = attrs[0]
		}
		return c.StartChild(ctx, tracer, name, attr)
	}
	return parent.TracerProvider().Tracer(tracer).Start(ctx, name, trace.WithAttributes(slices.Clone(attrs)...))
}

// childStarter is a span that starts a child (in ctx, which carries it) of
// the instrumentation scope tracer, with attr unless it is the zero
// KeyValue, more cheaply than its provider's tracer would:
// framework/tracing/spans' spans.
type childStarter interface {
	StartChild(ctx context.Context, tracer, name string, attr attribute.KeyValue) (context.Context, trace.Span)
}

// SetAttributesOwned sets kvs on span, handing kvs over: a span of
// framework/tracing/spans keeps kvs' array instead of copying it. The caller
// must not use kvs afterwards.
func SetAttributesOwned(span trace.Span, kvs []attribute.KeyValue) {
	if a, ok := span.(attributeAdopter); ok {
		a.AdoptAttributes(kvs)
		return
	}
	span.SetAttributes(kvs...)
}

// attributeAdopter is a span that can keep a caller's attribute slice:
// framework/tracing/spans' spans.
type attributeAdopter interface {
	AdoptAttributes(kvs []attribute.KeyValue)
}

// End ends span, recording err (if any) as its error status.
func End(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
