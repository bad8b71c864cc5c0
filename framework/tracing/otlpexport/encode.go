package otlpexport

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/converge-dev/converge/framework/tracing/spans"
)

// Field numbers of opentelemetry/proto/{collector/trace,trace,common,resource}/v1.
const (
	requestResourceSpans = 1 // ExportTraceServiceRequest

	resourceSpansResource   = 1 // ResourceSpans
	resourceSpansScopeSpans = 2
	resourceAttributes      = 1 // Resource

	scopeSpansScope     = 1 // ScopeSpans
	scopeSpansSpans     = 2
	scopeSpansSchemaURL = 3
	scopeName           = 1 // InstrumentationScope
	scopeVersion        = 2
	scopeAttributes     = 3

	spanTraceID           = 1 // Span
	spanSpanID            = 2
	spanTraceState        = 3
	spanParentSpanID      = 4
	spanName              = 5
	spanKind              = 6
	spanStart             = 7
	spanEnd               = 8
	spanAttributes        = 9
	spanDroppedAttributes = 10
	spanEvents            = 11
	spanDroppedEvents     = 12
	spanLinks             = 13
	spanDroppedLinks      = 14
	spanStatus            = 15
	spanFlags             = 16

	eventTime              = 1 // Span.Event
	eventName              = 2
	eventAttributes        = 3
	eventDroppedAttributes = 4

	linkTraceID           = 1 // Span.Link
	linkSpanID            = 2
	linkTraceState        = 3
	linkAttributes        = 4
	linkDroppedAttributes = 5
	linkFlags             = 6

	statusMessage = 2 // Status
	statusCode    = 3

	keyValueKey   = 1 // KeyValue
	keyValueValue = 2

	anyString = 1 // AnyValue
	anyBool   = 2
	anyInt    = 3
	anyDouble = 4
	anyArray  = 5
	anyKVList = 6
	anyBytes  = 7

	listValues = 1 // ArrayValue, KeyValueList
)

// SpanFlags bits: the span context's W3C flags, and whether its parent is
// remote (and that this is known).
const (
	flagsHasIsRemote = 0x100
	flagsIsRemote    = 0x200
)

// AppendRequest appends to b the ExportTraceServiceRequest of spans (ended)
// from the resource with attributes res: one ResourceSpans, one ScopeSpans
// per instrumentation scope (in order of first appearance), the spans in
// their order within it (see the package comment for how it compares with
// the OpenTelemetry SDK's exporter).
func AppendRequest(b []byte, res []attribute.KeyValue, batch []*spans.Span) []byte {
	if len(batch) == 0 {
		return b
	}
	var scopes [8]*spans.Scope
	seen := scopes[:0]
	for _, s := range batch {
		if sc := s.Scope(); !containsScope(seen, sc) {
			seen = append(seen, sc)
		}
	}
	rs := begin(&b, requestResourceSpans)
	r := begin(&b, resourceSpansResource)
	for _, kv := range res {
		b = appendKeyValue(b, resourceAttributes, kv)
	}
	end(&b, r)
	for _, sc := range seen {
		ss := begin(&b, resourceSpansScopeSpans)
		b = appendScope(b, sc)
		for _, s := range batch {
			if s.Scope() == sc {
				b = appendSpan(b, s)
			}
		}
		if sc.SchemaURL != "" {
			b = appendString(b, scopeSpansSchemaURL, sc.SchemaURL)
		}
		end(&b, ss)
	}
	end(&b, rs)
	return b
}

func containsScope(l []*spans.Scope, sc *spans.Scope) bool {
	for _, x := range l {
		if x == sc {
			return true
		}
	}
	return false
}

func appendScope(b []byte, sc *spans.Scope) []byte {
	m := begin(&b, scopeSpansScope)
	b = appendString(b, scopeName, sc.Name)
	if sc.Version != "" {
		b = appendString(b, scopeVersion, sc.Version)
	}
	for it := sc.Attributes.Iter(); it.Next(); {
		b = appendKeyValue(b, scopeAttributes, it.Attribute())
	}
	end(&b, m)
	return b
}

func appendSpan(b []byte, s *spans.Span) []byte {
	m := begin(&b, scopeSpansSpans)
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, spanTraceID, tid[:])
	b = appendBytes(b, spanSpanID, sid[:])
	if ts := sc.TraceState(); ts.Len() > 0 {
		b = appendString(b, spanTraceState, ts.String())
	}
	parent := s.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, spanParentSpanID, psid[:])
	}
	b = appendString(b, spanName, s.Name())
	b = appendVarint(b, spanKind, uint64(kind(s.Kind())))
	b = appendFixed64(b, spanStart, unixNano(s.StartTime()))
	b = appendFixed64(b, spanEnd, unixNano(s.EndTime()))
	for _, kv := range s.Attributes() {
		b = appendKeyValue(b, spanAttributes, kv)
	}
	b = appendVarint(b, spanDroppedAttributes, clamp(s.DroppedAttributes()))
	for _, e := range s.Events() {
		em := begin(&b, spanEvents)
		b = appendFixed64(b, eventTime, unixNano(e.Time))
		b = appendString(b, eventName, e.Name)
		for _, kv := range e.Attributes {
			b = appendKeyValue(b, eventAttributes, kv)
		}
		b = appendVarint(b, eventDroppedAttributes, clamp(e.DroppedAttributes))
		end(&b, em)
	}
	b = appendVarint(b, spanDroppedEvents, clamp(s.DroppedEvents()))
	for _, l := range s.Links() {
		lm := begin(&b, spanLinks)
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		b = appendBytes(b, linkTraceID, ltid[:])
		b = appendBytes(b, linkSpanID, lsid[:])
		if ts := l.SpanContext.TraceState(); ts.Len() > 0 {
			b = appendString(b, linkTraceState, ts.String())
		}
		for _, kv := range l.Attributes {
			b = appendKeyValue(b, linkAttributes, kv)
		}
		b = appendVarint(b, linkDroppedAttributes, clamp(l.DroppedAttributes))
		b = appendFixed32(b, linkFlags, flags(l.SpanContext.TraceFlags(), l.SpanContext.IsRemote()))
		end(&b, lm)
	}
	b = appendVarint(b, spanDroppedLinks, clamp(s.DroppedLinks()))
	code, desc := s.Status()
	st := begin(&b, spanStatus)
	if desc != "" {
		b = appendString(b, statusMessage, desc)
	}
	b = appendVarint(b, statusCode, uint64(statusCodeOf(code)))
	end(&b, st)
	b = appendFixed32(b, spanFlags, flags(sc.TraceFlags(), parent.IsRemote()))
	end(&b, m)
	return b
}

// kind is the OTLP SpanKind of k.
func kind(k trace.SpanKind) int {
	switch k {
	case trace.SpanKindInternal, trace.SpanKindServer, trace.SpanKindClient, trace.SpanKindProducer, trace.SpanKindConsumer:
		return int(k) // the API's numbering is OTLP's
	}
	return 0
}

// statusCodeOf is the OTLP status code of c (Unset 0, Ok 1, Error 2; the API
// numbers Error 1 and Ok 2).
func statusCodeOf(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func flags(f trace.TraceFlags, remote bool) uint32 {
	v := uint32(f) | flagsHasIsRemote
	if remote {
		v |= flagsIsRemote
	}
	return v
}

func unixNano(t time.Time) uint64 { return uint64(max(0, t.UnixNano())) }

func clamp(n int) uint64 { return uint64(min(max(n, 0), math.MaxUint32)) }

// appendKeyValue appends kv as a KeyValue in field num.
func appendKeyValue(b []byte, num protowire.Number, kv attribute.KeyValue) []byte {
	m := begin(&b, num)
	b = appendString(b, keyValueKey, string(kv.Key))
	b = appendValue(b, keyValueValue, kv.Value)
	end(&b, m)
	return b
}

// appendValue appends v as an AnyValue in field num, as the SDK's exporter
// converts it (a map keeps the last value of a repeated key, after
// attribute.MapValue sorted it by key; an unknown type is the string
// "INVALID").
func appendValue(b []byte, num protowire.Number, v attribute.Value) []byte {
	m := begin(&b, num)
	switch v.Type() {
	case attribute.EMPTY:
	case attribute.BOOL:
		b = appendBool(b, anyBool, v.AsBool())
	case attribute.INT64:
		b = protowire.AppendTag(b, anyInt, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = protowire.AppendTag(b, anyDouble, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		b = protowire.AppendTag(b, anyString, protowire.BytesType)
		b = protowire.AppendString(b, validUTF8(v.AsString()))
	case attribute.BYTESLICE:
		b = appendBytesAlways(b, anyBytes, v.AsByteSlice())
	case attribute.BOOLSLICE:
		a := begin(&b, anyArray)
		for _, x := range v.AsBoolSlice() {
			e := begin(&b, listValues)
			b = appendBool(b, anyBool, x)
			end(&b, e)
		}
		end(&b, a)
	case attribute.INT64SLICE:
		a := begin(&b, anyArray)
		for _, x := range v.AsInt64Slice() {
			e := begin(&b, listValues)
			b = protowire.AppendTag(b, anyInt, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(x))
			end(&b, e)
		}
		end(&b, a)
	case attribute.FLOAT64SLICE:
		a := begin(&b, anyArray)
		for _, x := range v.AsFloat64Slice() {
			e := begin(&b, listValues)
			b = protowire.AppendTag(b, anyDouble, protowire.Fixed64Type)
			b = protowire.AppendFixed64(b, math.Float64bits(x))
			end(&b, e)
		}
		end(&b, a)
	case attribute.STRINGSLICE:
		a := begin(&b, anyArray)
		for _, x := range v.AsStringSlice() {
			e := begin(&b, listValues)
			b = protowire.AppendTag(b, anyString, protowire.BytesType)
			b = protowire.AppendString(b, validUTF8(x))
			end(&b, e)
		}
		end(&b, a)
	case attribute.SLICE:
		a := begin(&b, anyArray)
		for _, x := range v.AsSlice() {
			b = appendValue(b, listValues, x)
		}
		end(&b, a)
	case attribute.MAP:
		a := begin(&b, anyKVList)
		kvs := v.AsMap()
		for i, kv := range kvs {
			if i+1 < len(kvs) && kvs[i+1].Key == kv.Key {
				continue // the last of a run of one key wins
			}
			b = appendKeyValue(b, listValues, kv)
		}
		end(&b, a)
	default:
		b = appendString(b, anyString, "INVALID")
	}
	end(&b, m)
	return b
}

func appendBool(b []byte, num protowire.Number, v bool) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, protowire.EncodeBool(v))
}

// appendString appends a non-empty string field (proto3 omits empty ones).
func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, validUTF8(s))
}

// appendBytes appends a non-empty bytes field.
func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	return appendBytesAlways(b, num, v)
}

// appendBytesAlways appends a bytes field even when empty (a oneof member).
func appendBytesAlways(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendVarint appends a non-zero varint field.
func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendFixed64 appends a non-zero fixed64 field.
func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

// appendFixed32 appends a non-zero fixed32 field.
func appendFixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

// validUTF8 replaces the invalid bytes of s by U+FFFD (protobuf strings are
// UTF-8).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// begin appends the tag of the message field num and one byte for its
// length, and returns where the length goes; end writes it.
func begin(b *[]byte, num protowire.Number) int {
	*b = protowire.AppendTag(*b, num, protowire.BytesType)
	*b = append(*b, 0)
	return len(*b) - 1
}

// end writes the length of the message begun at at, moving the message up
// when its length needs more than the byte reserved.
func end(b *[]byte, at int) {
	n := len(*b) - at - 1
	if n < 0x80 {
		(*b)[at] = byte(n)
		return
	}
	extra := protowire.SizeVarint(uint64(n)) - 1
	*b = append(*b, make([]byte, extra)...)
	copy((*b)[at+1+extra:], (*b)[at+1:at+1+n])
	protowire.AppendVarint((*b)[:at], uint64(n))
}
