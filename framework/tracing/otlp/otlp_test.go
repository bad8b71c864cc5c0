package otlp_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/converge-dev/converge/framework/tracing"
	"github.com/converge-dev/converge/framework/tracing/otlp"
	"github.com/converge-dev/converge/framework/tracing/otlptest"
)

// testError is an error of a named type (exception.type is its path and name).
type testError struct{ msg string }

func (e *testError) Error() string { return e.msg }

// Fixed identities and times, so that both providers export the same.
var (
	remoteSampled = trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, SpanID: trace.SpanID{1, 1, 1, 1, 1, 1, 1, 1},
		TraceFlags: trace.FlagsSampled, Remote: true, TraceState: mustTraceState("vendor=abc,other=1"),
	})
	remoteUnsampled = trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}, SpanID: trace.SpanID{2, 2, 2, 2, 2, 2, 2, 2}, Remote: true,
	})
	linked = trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}, SpanID: trace.SpanID{3, 3, 3, 3, 3, 3, 3, 3},
		TraceFlags: trace.FlagsSampled, TraceState: mustTraceState("l=1"),
	})
	t0 = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
)

func mustTraceState(s string) trace.TraceState {
	ts, err := trace.ParseTraceState(s)
	if err != nil {
		panic(err)
	}
	return ts
}

// allTypes has an attribute of every value type.
func allTypes(prefix string) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.Bool(prefix+"bool", true), attribute.Bool(prefix+"false", false),
		attribute.Int(prefix+"int", -42), attribute.Int64(prefix+"int64", 1<<40), attribute.Float64(prefix+"float", 2.5),
		attribute.String(prefix+"string", "é"), attribute.String(prefix+"emptystring", ""),
		attribute.BoolSlice(prefix+"bools", []bool{true, false}), attribute.IntSlice(prefix+"ints", []int{1, -2}),
		attribute.Int64Slice(prefix+"int64s", []int64{3, 4}), attribute.Float64Slice(prefix+"floats", []float64{0.5, -1}),
		attribute.StringSlice(prefix+"strings", []string{"a", ""}), attribute.ByteSlice(prefix+"bytes", []byte{0, 1, 255}),
		attribute.ByteSlice(prefix+"nobytes", nil),
		attribute.Slice(prefix+"slice", attribute.IntValue(1), attribute.StringValue("x"),
			attribute.MapValue(attribute.String("k", "a"), attribute.String("k", "b"))),
		attribute.Map(prefix+"map", attribute.String("z", "1"), attribute.Int("a", 2), attribute.String("z", "3"),
			attribute.Map("nested", attribute.Bool("b", true))),
		{Key: attribute.Key(prefix + "empty")},
	}
}

// workload starts and ends spans exercising the API through tp.
func workload(tp trace.TracerProvider) {
	ctx := context.Background()
	tr := tp.Tracer("converge/test")
	lib := tp.Tracer("lib", trace.WithInstrumentationVersion("1.2.3"), trace.WithSchemaURL("https://opentelemetry.io/schemas/1.26.0"),
		trace.WithInstrumentationAttributes(attribute.String("team", "core")))

	// A request under a sampled remote parent, with children and
	// grandchildren.
	rctx := trace.ContextWithRemoteSpanContext(ctx, remoteSampled)
	rctx, req := tr.Start(rctx, "request", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(t0),
		trace.WithAttributes(attribute.String("http.request.method", "POST")))
	req.SetAttributes(allTypes("")...)
	req.SetAttributes(attribute.String("http.request.method", "PUT"), attribute.String("", "invalid key"))
	req.AddEvent("received", trace.WithTimestamp(t0.Add(time.Millisecond)), trace.WithAttributes(allTypes("ev.")...))
	for i, kind := range []trace.SpanKind{trace.SpanKindUnspecified, trace.SpanKindInternal, trace.SpanKindClient, trace.SpanKindProducer, trace.SpanKindConsumer, trace.SpanKind(42)} {
		cctx, child := tr.Start(rctx, "child "+strconv.Itoa(i), trace.WithSpanKind(kind), trace.WithTimestamp(t0.Add(time.Duration(i)*time.Second)))
		_, grand := lib.Start(cctx, "grandchild "+strconv.Itoa(i), trace.WithTimestamp(t0))
		grand.End(trace.WithTimestamp(t0.Add(time.Second)))
		child.End(trace.WithTimestamp(t0.Add(time.Duration(i+1) * time.Second)))
	}
	_, failed := tr.Start(rctx, "failed", trace.WithTimestamp(t0))
	failed.RecordError(&testError{msg: "boom"}, trace.WithTimestamp(t0.Add(time.Second)), trace.WithAttributes(attribute.Int("attempt", 3)))
	failed.RecordError(errors.New("plain"), trace.WithTimestamp(t0.Add(2*time.Second)))
	failed.RecordError(nil)
	failed.SetStatus(codes.Error, "first")
	failed.SetStatus(codes.Error, "second")
	failed.SetStatus(codes.Unset, "ignored")
	failed.End(trace.WithTimestamp(t0.Add(3 * time.Second)))
	_, ok := tr.Start(rctx, "error then ok", trace.WithTimestamp(t0))
	ok.SetStatus(codes.Error, "x")
	ok.SetStatus(codes.Ok, "description dropped")
	ok.SetStatus(codes.Error, "ignored after ok")
	ok.End(trace.WithTimestamp(t0.Add(time.Second)))
	_, renamed := tr.Start(rctx, "before", trace.WithTimestamp(t0), trace.WithLinks(
		trace.Link{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.String("why", "batch")}},
		trace.Link{}, // ignored: nothing in it
		trace.Link{Attributes: []attribute.KeyValue{attribute.Int("only", 1)}},
	))
	renamed.SetName("renamed")
	renamed.AddLink(trace.Link{SpanContext: remoteSampled})
	renamed.End(trace.WithTimestamp(t0.Add(time.Second)))
	renamed.SetName("after end")
	renamed.SetAttributes(attribute.Int("after", 1))
	renamed.End(trace.WithTimestamp(t0.Add(time.Hour)))

	// Over the limits: attributes (with a repeated key past the limit),
	// events, attributes per event, links, attributes per link.
	_, big := tr.Start(rctx, "limits", trace.WithTimestamp(t0))
	var many []attribute.KeyValue
	for i := range 140 {
		many = append(many, attribute.Int("a"+strconv.Itoa(i), i))
	}
	big.SetAttributes(many[:100]...)
	big.SetAttributes(append(many[100:], attribute.Int("a5", -5))...)
	for i := range 130 {
		big.AddEvent("e"+strconv.Itoa(i), trace.WithTimestamp(t0.Add(time.Duration(i))), trace.WithAttributes(many[:1+i%3]...))
	}
	big.AddEvent("wide", trace.WithTimestamp(t0), trace.WithAttributes(many...))
	for i := range 130 {
		big.AddLink(trace.Link{SpanContext: linked, Attributes: many[:i%2]})
	}
	big.AddLink(trace.Link{SpanContext: linked, Attributes: many})
	big.End(trace.WithTimestamp(t0.Add(time.Second)))

	// A new root under the request, and a span of its own trace.
	_, root := tr.Start(rctx, "new root", trace.WithNewRoot(), trace.WithTimestamp(t0))
	root.End(trace.WithTimestamp(t0.Add(time.Second)))
	req.End(trace.WithTimestamp(t0.Add(time.Minute)))

	// Not sampled by the caller: nothing recorded below, but the context
	// carries the trace.
	uctx, unsampled := tr.Start(trace.ContextWithRemoteSpanContext(ctx, remoteUnsampled), "unsampled")
	_, below := tr.Start(uctx, "below unsampled")
	if unsampled.IsRecording() || below.IsRecording() || below.SpanContext().TraceID() != remoteUnsampled.TraceID() || below.SpanContext().IsSampled() {
		panic(fmt.Sprintf("unsampled parent: recording %v %v, span context %v", unsampled.IsRecording(), below.IsRecording(), below.SpanContext()))
	}
	below.End()
	unsampled.End()
}

// exported runs workload through the provider of sdk and returns the spans
// received, by name.
func exported(t *testing.T, sdk string) map[string]otlptest.Span {
	rcv := otlptest.Start(t)
	tp, err := otlp.New(t.Context(), tracing.Config{Endpoint: rcv.Addr(), SamplingRatePerMillion: 1_000_000, SDK: sdk}, "differential")
	if err != nil {
		t.Fatal(err)
	}
	workload(tp)
	if err := tp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	out := map[string]otlptest.Span{}
	for _, s := range rcv.Spans() {
		if _, dup := out[s.Name]; dup {
			t.Fatalf("%s: two spans named %q", sdk, s.Name)
		}
		out[s.Name] = s
	}
	return out
}

// TestDifferential runs one instrumented workload through our provider and
// through the OpenTelemetry SDK's, both exporting to an OTLP receiver, and
// compares what the receivers decoded field by field: IDs and the times not
// fixed by the workload must differ, the tree they form must not.
func TestDifferential(t *testing.T) {
	t.Parallel()
	ours, sdk := exported(t, tracing.SDKConverge), exported(t, tracing.SDKOTel)
	names := func(m map[string]otlptest.Span) []string {
		var out []string
		for n := range m {
			out = append(out, n)
		}
		slices.Sort(out)
		return out
	}
	if got, want := names(ours), names(sdk); !slices.Equal(got, want) {
		t.Fatalf("spans %q, the SDK's %q", got, want)
	}
	if len(ours) != 18 {
		t.Errorf("%d spans, want 18", len(ours))
	}
	for name, o := range ours {
		s := sdk[name]
		if !proto.Equal(o.ScopeProto, s.ScopeProto) {
			t.Errorf("%s: scope %v, the SDK's %v", name, o.ScopeProto, s.ScopeProto)
		}
		if o.Service != "differential" || fmt.Sprint(o.Resource) != fmt.Sprint(s.Resource) {
			t.Errorf("%s: resource %v, the SDK's %v", name, o.Resource, s.Resource)
		}
		// The tree: same trace as, and parent named as, the SDK's.
		if parentName(ours, o) != parentName(sdk, s) {
			t.Errorf("%s: parent %q, the SDK's %q", name, parentName(ours, o), parentName(sdk, s))
		}
		if sameTrace(ours, o) != sameTrace(sdk, s) {
			t.Errorf("%s: in the trace of %q, the SDK's in that of %q", name, sameTrace(ours, o), sameTrace(sdk, s))
		}
		op, sp := normalize(o.Proto, s.Proto)
		if d := cmp.Diff(sp, op, protocmp.Transform()); d != "" {
			t.Errorf("%s differs from the SDK's (-SDK +ours):\n%s", name, d)
		}
	}
	// The times the workload did not fix are real and ordered.
	for _, name := range []string{"unsampled", "below unsampled"} {
		if _, ok := ours[name]; ok {
			t.Errorf("%s: exported", name)
		}
	}
	req := ours["request"]
	if req.TraceID != remoteSampled.TraceID().String() || req.ParentSpanID != remoteSampled.SpanID().String() || req.TraceState != "vendor=abc,other=1" {
		t.Errorf("request: trace %s parent %s state %q, want the remote parent's", req.TraceID, req.ParentSpanID, req.TraceState)
	}
	if l := ours["renamed"].Links; len(l) != 3 || l[0].TraceState != "l=1" || l[2].TraceState != "vendor=abc,other=1" {
		t.Errorf("renamed: links %+v, want the trace states of the linked spans", l)
	}
	if root := ours["new root"]; root.TraceID == req.TraceID || root.ParentSpanID != "" {
		t.Errorf("new root: trace %s parent %q", root.TraceID, root.ParentSpanID)
	}
}

// parentName is the name of s's parent ("remote" for the remote parent, ""
// for none).
func parentName(all map[string]otlptest.Span, s otlptest.Span) string {
	if s.ParentSpanID == "" {
		return ""
	}
	for _, p := range all {
		if p.SpanID == s.ParentSpanID && p.TraceID == s.TraceID {
			return p.Name
		}
	}
	if s.ParentSpanID == remoteSampled.SpanID().String() {
		return "remote"
	}
	return "unknown " + s.ParentSpanID
}

// sameTrace names the first span (by name) of s's trace.
func sameTrace(all map[string]otlptest.Span, s otlptest.Span) string {
	var names []string
	for _, p := range all {
		if p.TraceID == s.TraceID {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	return names[0]
}

// normalize clears what must differ: the span's own IDs and its parent's
// (compared as a tree above), and the times the workload did not fix (the
// unsampled spans' only).
func normalize(a, b *tracepb.Span) (*tracepb.Span, *tracepb.Span) {
	a, b = proto.CloneOf(a), proto.CloneOf(b)
	rtid, rsid := remoteSampled.TraceID(), remoteSampled.SpanID()
	for _, s := range []*tracepb.Span{a, b} {
		s.SpanId = nil
		if string(s.GetParentSpanId()) != string(rsid[:]) {
			s.ParentSpanId = nil
		}
		if string(s.GetTraceId()) != string(rtid[:]) {
			s.TraceId = nil
		}
		if s.GetStartTimeUnixNano() < uint64(t0.UnixNano()) { // not fixed by the workload
			s.StartTimeUnixNano, s.EndTimeUnixNano = 0, 0
		}
	}
	// The one deliberate difference: we send a link's trace state (OTLP's
	// Span.Link.trace_state), the SDK's exporter does not.
	for _, l := range a.GetLinks() {
		l.TraceState = ""
	}
	return a, b
}
