// Package otlp builds the tracer provider of a Converge component from a
// tracing.Config: spans batched to an OTLP/gRPC collector, sampled by a
// parent-based ratio sampler (Kubernetes' samplingRatePerMillion). The
// provider is framework/tracing/spans with the framework/tracing/otlpexport
// exporter, or, with Config.SDK "otel", the OpenTelemetry SDK's.
package otlp

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/converge-dev/converge/framework/tracing"
	"github.com/converge-dev/converge/framework/tracing/otlpexport"
	"github.com/converge-dev/converge/framework/tracing/spans"
)

// Provider is a component's tracer provider.
type Provider struct {
	trace.TracerProvider
	shutdown func(context.Context) error
}

// New returns the provider of the component named service (the service.name
// of its spans) for c: a no-op one when c is disabled. Export errors go to
// ctx's logger.
func New(ctx context.Context, c tracing.Config, service string) (*Provider, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if !c.Enabled() {
		return &Provider{TracerProvider: noop.NewTracerProvider(), shutdown: func(context.Context) error { return nil }}, nil
	}
	ratio := float64(c.SamplingRatePerMillion) / 1e6
	if c.SDK == tracing.SDKOTel {
		return newOTel(ctx, c.Endpoint, service, ratio)
	}
	exp, err := otlpexport.New(c.Endpoint, service, logr.FromContextOrDiscard(ctx).WithName("tracing"))
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	tp := spans.New(spans.Options{Sampling: ratio, Exporter: exp, Logger: logr.FromContextOrDiscard(ctx).WithName("tracing")})
	return &Provider{TracerProvider: tp, shutdown: func(ctx context.Context) error {
		err := tp.Shutdown(ctx)
		if cerr := exp.Close(); err == nil {
			err = cerr
		}
		return err
	}}, nil
}

// newOTel returns the OpenTelemetry SDK's provider.
func newOTel(ctx context.Context, endpoint, service string, ratio float64) (*Provider, error) {
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter to %s: %w", endpoint, err)
	}
	res := sdkresource.NewSchemaless(attribute.String("service.name", service))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))),
	)
	return &Provider{TracerProvider: tp, shutdown: tp.Shutdown}, nil
}

// Shutdown flushes the spans not exported yet and stops the exporter.
func (p *Provider) Shutdown(ctx context.Context) error {
	if err := p.shutdown(ctx); err != nil {
		return fmt.Errorf("tracing: shut down: %w", err)
	}
	return nil
}
