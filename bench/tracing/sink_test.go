package tracing

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// countingSink is an OTLP/gRPC trace collector that only counts the spans it
// is sent: it walks each request's protobuf without decoding it (≈ 0.1 µs a
// span, where decoding into the generated types costs ≈ 9), so that on a
// 2-core machine the collector takes as little as possible from the servers
// measured. What the exporters send is checked by framework/tracing's tests.
type countingSink struct {
	addr  string
	spans atomic.Int64
}

func startCountingSink(tb testing.TB) *countingSink {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	s := &countingSink{addr: ln.Addr().String()}
	srv := grpc.NewServer(grpc.ForceServerCodecV2(rawCodec{}))
	srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: "opentelemetry.proto.collector.trace.v1.TraceService",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Export", Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var req []byte
			if err := dec(&req); err != nil {
				return nil, err
			}
			n, err := countSpans(req)
			if err != nil {
				return nil, err
			}
			s.spans.Add(int64(n))
			return []byte{}, nil // an empty ExportTraceServiceResponse: all accepted
		}}},
	}, s)
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(srv.Stop)
	return s
}

// countSpans counts the spans of an ExportTraceServiceRequest: field 1
// resource_spans, its field 2 scope_spans, its field 2 spans.
func countSpans(req []byte) (int, error) {
	n := 0
	err := eachField(req, 1, func(rs []byte) error {
		return eachField(rs, 2, func(ss []byte) error {
			return eachField(ss, 2, func([]byte) error { n++; return nil })
		})
	})
	return n, err
}

var errMalformed = errors.New("malformed OTLP request")

// eachField calls f with each length-delimited field num of msg.
func eachField(msg []byte, num protowire.Number, f func([]byte) error) error {
	for len(msg) > 0 {
		n, typ, l := protowire.ConsumeTag(msg)
		if l < 0 {
			return errMalformed
		}
		msg = msg[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(msg)
			if l < 0 {
				return errMalformed
			}
			if err := f(v); err != nil {
				return err
			}
			msg = msg[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(n, typ, msg)
		if l < 0 {
			return errMalformed
		}
		msg = msg[l:]
	}
	return nil
}

// rawCodec hands requests over as bytes and sends responses as they are.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, errors.New("rawCodec: not bytes")
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return errors.New("rawCodec: not *[]byte")
	}
	*p = data.Materialize()
	return nil
}

// TestCountingSink: the sink counts what an OTLP request holds.
func TestCountingSink(t *testing.T) {
	// Two resource spans: one scope with 2 spans, one with 1; other fields around.
	span := protowire.AppendTag(nil, 2, protowire.BytesType)
	span = protowire.AppendBytes(span, []byte{0x0a, 0x01, 0x00})
	scope := protowire.AppendTag(nil, 1, protowire.BytesType)
	scope = protowire.AppendBytes(scope, []byte{0x0a, 0x01, 'x'})
	ss := append(append(append([]byte{}, scope...), span...), span...)
	ss1 := append(append([]byte{}, scope...), span...)
	rs := func(ss []byte) []byte {
		b := protowire.AppendTag(nil, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, []byte{})
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		return protowire.AppendBytes(b, ss)
	}
	req := protowire.AppendTag(nil, 1, protowire.BytesType)
	req = protowire.AppendBytes(req, rs(ss))
	req = protowire.AppendTag(req, 1, protowire.BytesType)
	req = protowire.AppendBytes(req, rs(ss1))
	if n, err := countSpans(req); err != nil || n != 3 {
		t.Errorf("countSpans: %d, %v; want 3", n, err)
	}
	if _, err := countSpans([]byte{0x0a, 0x05}); err == nil {
		t.Error("a truncated request counted")
	}
}
