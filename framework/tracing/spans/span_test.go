package spans_test

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
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
	if n := testing.AllocsPerRun(100, func() {
		_, s := tracing.Child(pctx, "t", "child", attribute.String("key", "/registry/configmaps/"))
		s.End()
	}); n > 2 {
		t.Errorf("a sampled child with an attribute: %v allocations, want at most 2", n)
	}
}

// TestAdoptAttributes: a span keeps the slice it is handed, compacted in
// place as SetAttributes would store the same attributes; a span that has
// attributes already copies them.
func TestAdoptAttributes(t *testing.T) {
	t.Parallel()
	tr := spans.New(spans.Options{Sampling: 1}).Tracer("t")
	in := []attribute.KeyValue{attribute.String("a", "1"), {}, attribute.Int("b", 2), attribute.String("a", "3"), attribute.Bool("c", true)}
	want := []attribute.KeyValue{attribute.String("a", "3"), attribute.Int("b", 2), attribute.Bool("c", true)}
	for _, tc := range []struct {
		name  string
		first []attribute.KeyValue
		want  []attribute.KeyValue
		kept  bool
	}{
		{"fresh", nil, want, true},
		{"after others", []attribute.KeyValue{attribute.String("z", "0")}, append([]attribute.KeyValue{attribute.String("z", "0")}, want...), false},
	} {
		kvs := append(make([]attribute.KeyValue, 0, 8), in...)
		_, sp := tr.Start(context.Background(), tc.name)
		sp.SetAttributes(tc.first...)
		tracing.SetAttributesOwned(sp, kvs)
		sp.End()
		s := sp.(*spans.Span)
		if got := s.Attributes(); !slices.Equal(got, tc.want) || s.DroppedAttributes() != 1 || (&got[0] == &kvs[0]) != tc.kept {
			t.Errorf("%s: attributes %v (dropped %d, kept the array: %v), want %v (dropped 1, kept: %v)", tc.name, got, s.DroppedAttributes(),
				&got[0] == &kvs[0], tc.want, tc.kept)
		}
	}
	// An ended span takes nothing.
	_, sp := tr.Start(context.Background(), "ended")
	sp.End()
	tracing.SetAttributesOwned(sp, []attribute.KeyValue{attribute.String("a", "1")})
	if got := sp.(*spans.Span).Attributes(); len(got) != 0 {
		t.Errorf("ended span: attributes %v, want none", got)
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
