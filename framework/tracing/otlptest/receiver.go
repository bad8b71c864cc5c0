// Package otlptest is an in-process OTLP/gRPC trace receiver for tests: it
// collects the spans a component exports, so a test can assert the span tree
// of a request or a reconcile.
package otlptest

import (
	"context"
	"encoding/hex"
	"net"
	"slices"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
)

// Span is one received span.
type Span struct {
	Service      string // the resource's service.name
	Name         string
	TraceID      string            // hex
	SpanID       string            // hex
	ParentSpanID string            // hex; "" for a root span
	Attributes   map[string]string // string values (others: Values)
	Error        bool              // status code Error

	Kind                   tracepb.Span_SpanKind
	StatusCode             tracepb.Status_StatusCode
	StatusMessage          string
	Values                 map[string]any // typed: see Value
	Events                 []Event
	Links                  []Link
	Scope, ScopeVersion    string
	Resource               map[string]any // the resource's attributes, typed
	Start, End             uint64         // Unix ns
	Flags                  uint32
	TraceState             string
	DroppedAttributesCount uint32
	DroppedEventsCount     uint32
	DroppedLinksCount      uint32
	// Proto is the span as received, ScopeProto its scope's.
	Proto      *tracepb.Span
	ScopeProto *commonpb.InstrumentationScope
}

// Event is a received span event.
type Event struct {
	Name                   string
	Time                   uint64
	Attributes             map[string]any
	DroppedAttributesCount uint32
}

// Link is a received span link.
type Link struct {
	TraceID, SpanID, TraceState string
	Attributes                  map[string]any
	DroppedAttributesCount      uint32
	Flags                       uint32
}

// Value converts an OTLP value to Go: string, bool, int64, float64, []byte,
// []any (an array), map[string]any (a key-value list), nil (empty).
func Value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BytesValue:
		return x.BytesValue
	case *commonpb.AnyValue_ArrayValue:
		out := []any{}
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, Value(e))
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		return values(x.KvlistValue.GetValues())
	}
	return nil
}

// values converts key-values (a later key wins).
func values(kvs []*commonpb.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		out[kv.GetKey()] = Value(kv.GetValue())
	}
	return out
}

// Receiver collects spans.
type Receiver struct {
	coltracepb.UnimplementedTraceServiceServer
	addr string

	mu    sync.Mutex
	spans []Span
}

// Start listens on a free loopback port until the test ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("otlptest: listen: %v", err)
	}
	r := &Receiver{addr: ln.Addr().String()}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, r)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return r
}

// Addr is the receiver's host:port (a tracing.Config Endpoint).
func (r *Receiver) Addr() string { return r.addr }

// Export implements the OTLP trace service.
func (r *Receiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		resource := values(rs.GetResource().GetAttributes())
		service, _ := resource["service.name"].(string)
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				attrs := map[string]string{}
				for _, kv := range sp.GetAttributes() {
					attrs[kv.GetKey()] = kv.GetValue().GetStringValue()
				}
				parent := ""
				if len(sp.GetParentSpanId()) > 0 {
					parent = hex.EncodeToString(sp.GetParentSpanId())
				}
				s := Span{Service: service, Name: sp.GetName(),
					TraceID: hex.EncodeToString(sp.GetTraceId()), SpanID: hex.EncodeToString(sp.GetSpanId()),
					ParentSpanID: parent, Attributes: attrs, Error: sp.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR,
					Kind: sp.GetKind(), StatusCode: sp.GetStatus().GetCode(), StatusMessage: sp.GetStatus().GetMessage(),
					Values: values(sp.GetAttributes()), Scope: ss.GetScope().GetName(), ScopeVersion: ss.GetScope().GetVersion(),
					Resource: resource, Start: sp.GetStartTimeUnixNano(), End: sp.GetEndTimeUnixNano(), Flags: sp.GetFlags(),
					TraceState: sp.GetTraceState(), DroppedAttributesCount: sp.GetDroppedAttributesCount(),
					DroppedEventsCount: sp.GetDroppedEventsCount(), DroppedLinksCount: sp.GetDroppedLinksCount(),
					Proto: sp, ScopeProto: ss.GetScope()}
				for _, e := range sp.GetEvents() {
					s.Events = append(s.Events, Event{Name: e.GetName(), Time: e.GetTimeUnixNano(), Attributes: values(e.GetAttributes()),
						DroppedAttributesCount: e.GetDroppedAttributesCount()})
				}
				for _, l := range sp.GetLinks() {
					s.Links = append(s.Links, Link{TraceID: hex.EncodeToString(l.GetTraceId()), SpanID: hex.EncodeToString(l.GetSpanId()),
						TraceState: l.GetTraceState(), Attributes: values(l.GetAttributes()),
						DroppedAttributesCount: l.GetDroppedAttributesCount(), Flags: l.GetFlags()})
				}
				r.spans = append(r.spans, s)
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// Children returns the received spans whose parent is span.
func (r *Receiver) Children(span Span) []Span {
	var out []Span
	for _, s := range r.Spans() {
		if s.TraceID == span.TraceID && s.ParentSpanID == span.SpanID {
			out = append(out, s)
		}
	}
	return out
}
