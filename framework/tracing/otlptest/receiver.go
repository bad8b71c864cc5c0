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
	"google.golang.org/grpc"
)

// Span is one received span.
type Span struct {
	Service      string // the resource's service.name
	Name         string
	TraceID      string // hex
	SpanID       string // hex
	ParentSpanID string // hex; "" for a root span
	Attributes   map[string]string
	Error        bool // status code Error
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
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
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
				r.spans = append(r.spans, Span{Service: service, Name: sp.GetName(),
					TraceID: hex.EncodeToString(sp.GetTraceId()), SpanID: hex.EncodeToString(sp.GetSpanId()),
					ParentSpanID: parent, Attributes: attrs, Error: sp.GetStatus().GetCode() == 2})
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
