package otlpexport_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/converge-dev/converge/framework/tracing/otlpexport"
	"github.com/converge-dev/converge/framework/tracing/spans"
)

// The reference conversion below builds the generated OTLP structs from the
// spans' accessors, field by field as the proto defines them; AppendRequest
// must encode the same message.

func wantRequest(res []attribute.KeyValue, batch []*spans.Span) *coltracepb.ExportTraceServiceRequest {
	rs := &tracepb.ResourceSpans{Resource: &resourcepb.Resource{Attributes: wantKeyValues(res)}}
	byScope := map[*spans.Scope]*tracepb.ScopeSpans{}
	for _, s := range batch {
		ss, ok := byScope[s.Scope()]
		if !ok {
			sc := s.Scope()
			ss = &tracepb.ScopeSpans{Scope: &commonpb.InstrumentationScope{Name: fix(sc.Name), Version: fix(sc.Version),
				Attributes: wantKeyValues(sc.Attributes.ToSlice())}, SchemaUrl: fix(sc.SchemaURL)}
			byScope[sc] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, wantSpan(s))
	}
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{rs}}
}

func wantSpan(s *spans.Span) *tracepb.Span {
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid := sc.TraceID(), sc.SpanID()
	code, desc := s.Status()
	p := &tracepb.Span{TraceId: tid[:], SpanId: sid[:], TraceState: fix(sc.TraceState().String()), Name: fix(s.Name()),
		Kind: tracepb.Span_SpanKind(s.Kind()), StartTimeUnixNano: uint64(s.StartTime().UnixNano()), EndTimeUnixNano: uint64(s.EndTime().UnixNano()),
		Attributes: wantKeyValues(s.Attributes()), DroppedAttributesCount: uint32(s.DroppedAttributes()),
		DroppedEventsCount: uint32(s.DroppedEvents()), DroppedLinksCount: uint32(s.DroppedLinks()),
		Status: &tracepb.Status{Code: map[codes.Code]tracepb.Status_StatusCode{codes.Unset: 0, codes.Ok: 1, codes.Error: 2}[code], Message: fix(desc)},
		Flags:  uint32(sc.TraceFlags()) | 0x100}
	if parent.IsRemote() {
		p.Flags |= 0x200
	}
	if psid := parent.SpanID(); psid.IsValid() {
		p.ParentSpanId = psid[:]
	}
	for _, e := range s.Events() {
		p.Events = append(p.Events, &tracepb.Span_Event{Name: fix(e.Name), TimeUnixNano: uint64(e.Time.UnixNano()),
			Attributes: wantKeyValues(e.Attributes), DroppedAttributesCount: uint32(e.DroppedAttributes)})
	}
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		wl := &tracepb.Span_Link{TraceId: ltid[:], SpanId: lsid[:], TraceState: fix(l.SpanContext.TraceState().String()),
			Attributes: wantKeyValues(l.Attributes), DroppedAttributesCount: uint32(l.DroppedAttributes), Flags: uint32(l.SpanContext.TraceFlags()) | 0x100}
		if l.SpanContext.IsRemote() {
			wl.Flags |= 0x200
		}
		p.Links = append(p.Links, wl)
	}
	return p
}

func wantKeyValues(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	var out []*commonpb.KeyValue
	for _, kv := range kvs {
		out = append(out, &commonpb.KeyValue{Key: fix(string(kv.Key)), Value: wantValue(kv.Value)})
	}
	return out
}

func wantValue(v attribute.Value) *commonpb.AnyValue {
	arr := func(n int, f func(int) *commonpb.AnyValue) *commonpb.AnyValue {
		a := &commonpb.ArrayValue{}
		for i := range n {
			a.Values = append(a.Values, f(i))
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: a}}
	}
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: fix(s)}}
	}
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING:
		return str(v.AsString())
	case attribute.BYTESLICE:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}}
	case attribute.BOOLSLICE:
		x := v.AsBoolSlice()
		return arr(len(x), func(i int) *commonpb.AnyValue { return wantValue(attribute.BoolValue(x[i])) })
	case attribute.INT64SLICE:
		x := v.AsInt64Slice()
		return arr(len(x), func(i int) *commonpb.AnyValue { return wantValue(attribute.Int64Value(x[i])) })
	case attribute.FLOAT64SLICE:
		x := v.AsFloat64Slice()
		return arr(len(x), func(i int) *commonpb.AnyValue { return wantValue(attribute.Float64Value(x[i])) })
	case attribute.STRINGSLICE:
		x := v.AsStringSlice()
		return arr(len(x), func(i int) *commonpb.AnyValue { return str(x[i]) })
	case attribute.SLICE:
		x := v.AsSlice()
		return arr(len(x), func(i int) *commonpb.AnyValue { return wantValue(x[i]) })
	case attribute.MAP:
		// Sorted by key by attribute.MapValue; the last of a key wins.
		var kvs []attribute.KeyValue
		for _, kv := range v.AsMap() {
			if n := len(kvs); n > 0 && kvs[n-1].Key == kv.Key {
				kvs[n-1] = kv
				continue
			}
			kvs = append(kvs, kv)
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: wantKeyValues(kvs)}}}
	case attribute.EMPTY:
		return &commonpb.AnyValue{}
	}
	return str("INVALID")
}

// fix is what we send for a string: invalid UTF-8 replaced.
func fix(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// decode encodes batch and decodes it with the generated types.
func decode(t testing.TB, res []attribute.KeyValue, batch []*spans.Span) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	b := otlpexport.AppendRequest([]byte("prefix"), res, batch)
	if string(b[:6]) != "prefix" {
		t.Fatal("AppendRequest overwrote what was in its buffer")
	}
	got := &coltracepb.ExportTraceServiceRequest{}
	if err := proto.Unmarshal(b[6:], got); err != nil {
		t.Fatalf("decode our request: %v", err)
	}
	return got
}

func start(tp trace.TracerProvider, ctx context.Context, scope, name string, opts ...trace.SpanStartOption) (context.Context, *spans.Span) {
	ctx, s := tp.Tracer(scope).Start(ctx, name, opts...)
	return ctx, s.(*spans.Span)
}

func TestAppendRequest(t *testing.T) {
	t.Parallel()
	tp := spans.New(spans.Options{Sampling: 1})
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: 1, Remote: true})
	ctx, root := start(tp, trace.ContextWithRemoteSpanContext(context.Background(), remote), "a", "root", trace.WithSpanKind(trace.SpanKindServer),
		trace.WithLinks(trace.Link{SpanContext: remote, Attributes: []attribute.KeyValue{attribute.String("l", "v")}}))
	root.SetAttributes(attribute.String("s", strings.Repeat("x", 300)), attribute.Int("i", -1), attribute.Float64("nan", math.NaN()),
		attribute.Map("m", attribute.String("b", "1"), attribute.String("a", "2"), attribute.String("a", "3")),
		attribute.Slice("sl", attribute.MapValue(attribute.Int("k", 1), attribute.Int("k", 2))), attribute.StringSlice("ss", []string{"a"}),
		attribute.Float64Slice("fs", []float64{1.5}), attribute.BoolSlice("bs", []bool{false}), attribute.IntSlice("is", []int{7}),
		attribute.ByteSlice("b", nil), attribute.KeyValue{Key: "empty"})
	var batch []*spans.Span
	for i := range 300 { // a message over 16 KiB: lengths of several bytes
		_, c := start(tp, ctx, []string{"a", "b"}[i%2], "child")
		c.AddEvent("ev", trace.WithAttributes(attribute.Bool("ok", true)))
		c.RecordError(errors.New("failed"))
		c.SetStatus(codes.Error, "failed")
		c.End()
		batch = append(batch, c)
	}
	root.SetStatus(codes.Ok, "")
	root.End(trace.WithTimestamp(time.Now().Add(time.Second)))
	batch = append(batch, root)
	res := []attribute.KeyValue{attribute.String("service.name", "test")}
	got, want := decode(t, res, batch), wantRequest(res, batch)
	if !proto.Equal(want, got) { // NaN equals NaN there, not in cmp
		t.Errorf("decoded request differs (-want +got):\n%s", cmp.Diff(want, got, protocmp.Transform()))
	}
	if n := len(got.GetResourceSpans()[0].GetScopeSpans()); n != 2 {
		t.Errorf("%d scope spans, want 2 (one per scope)", n)
	}
	if b := otlpexport.AppendRequest(nil, res, nil); len(b) != 0 {
		t.Errorf("an empty batch encodes to %d bytes", len(b))
	}
}

// FuzzAppendRequest encodes spans of arbitrary contents (names, keys and
// strings may be invalid UTF-8: they are sent with U+FFFD in place of the
// invalid bytes) and decodes them with the generated types.
func FuzzAppendRequest(f *testing.F) {
	f.Add("span", "key", "value", int64(1), 1.5, []byte{1}, "event", "description", true, uint8(0))
	f.Add("", "", "", int64(-1), math.Inf(-1), []byte(nil), "", "", false, uint8(255))
	f.Add("\xff\xfe", "k\x80", "v\xc3", int64(math.MinInt64), math.NaN(), []byte{0xff}, "\xed\xa0\x80", "\x00", true, uint8(7))
	f.Fuzz(func(t *testing.T, name, key, str string, i int64, fl float64, bs []byte, event, desc string, flag bool, n uint8) {
		tp := spans.New(spans.Options{Sampling: 1})
		tr := tp.Tracer(name, trace.WithInstrumentationVersion(str), trace.WithSchemaURL(key))
		_, sp := tr.Start(context.Background(), name, trace.WithSpanKind(trace.SpanKind(n%7)))
		s := sp.(*spans.Span)
		attrs := []attribute.KeyValue{attribute.String(key, str), attribute.Int64(key+"i", i), attribute.Float64(key+"f", fl),
			attribute.ByteSlice(key+"b", bs), attribute.Bool(key+"t", flag), attribute.StringSlice(key+"ss", []string{str, name}),
			attribute.Map(key+"m", attribute.String(str, key), attribute.Int64(name, i)), attribute.Slice(key+"sl", attribute.StringValue(event))}
		for j := range int(n % 5) {
			attrs = append(attrs, attribute.Int(strings.Repeat(key, j), j))
		}
		s.SetAttributes(attrs...)
		s.AddEvent(event, trace.WithAttributes(attribute.String(key, desc)))
		s.AddLink(trace.Link{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{n}, SpanID: trace.SpanID{n}}),
			Attributes: []attribute.KeyValue{attribute.String(desc, str)}})
		s.SetStatus(codes.Code(n%3), desc)
		s.End()
		res := []attribute.KeyValue{attribute.String("service.name", name)}
		got, want := decode(t, res, []*spans.Span{s}), wantRequest(res, []*spans.Span{s})
		if !proto.Equal(got, want) {
			t.Fatalf("decoded request differs (-want +got):\n%s", cmp.Diff(want, got, protocmp.Transform()))
		}
	})
}
