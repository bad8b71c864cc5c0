package spans_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/converge-dev/converge/framework/tracing"
	"github.com/converge-dev/converge/framework/tracing/spans"
)

// TestAllocations: an unsampled span is its SpanContext and the context
// carrying it; a sampled child started by tracing.Child is the span and its
// context.
func TestAllocations(t *testing.T) {
	never := spans.New(spans.Options{Sampling: 0}).Tracer("t")
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		_, s := never.Start(ctx, "unsampled")
		s.End()
	}); n > 2 {
		t.Errorf("an unsampled span: %v allocations, want at most 2", n)
	}
	always := spans.New(spans.Options{Sampling: 1}).Tracer("t")
	pctx, parent := always.Start(ctx, "parent")
	defer parent.End()
	if n := testing.AllocsPerRun(100, func() {
		_, s := tracing.Child(pctx, "t", "child")
		s.End()
	}); n > 2 {
		t.Errorf("a sampled child: %v allocations, want at most 2", n)
	}
}

// TestStartChildAsTracer: tracing.Child through StartChild gives what the
// provider's tracer gives: same trace, parent, scope, attributes, kind.
func TestStartChildAsTracer(t *testing.T) {
	t.Parallel()
	tp := spans.New(spans.Options{Sampling: 1})
	ctx, parent := tp.Tracer("a", trace.WithInstrumentationVersion("1")).Start(context.Background(), "parent")
	for _, scope := range []string{"a", "b"} {
		_, c := tracing.Child(ctx, scope, "child")
		c.End()
		s := c.(*spans.Span)
		if !s.Parent().Equal(parent.SpanContext()) || s.SpanContext().TraceID() != parent.SpanContext().TraceID() || !s.SpanContext().IsSampled() ||
			s.Kind() != trace.SpanKindInternal || s.Scope().Name != scope || s.Scope().Version != "" {
			t.Errorf("child of scope %s: parent %v, context %v, kind %v, scope %+v", scope, s.Parent(), s.SpanContext(), s.Kind(), s.Scope())
		}
		if _, x := tp.Tracer(scope).Start(ctx, "x"); s.Scope() != x.(*spans.Span).Scope() {
			t.Errorf("child of scope %s: not the tracer's scope", scope)
		}
	}
}
