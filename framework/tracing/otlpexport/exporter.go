package otlpexport

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/converge-dev/converge/framework/tracing/spans"
)

// exportMethod is the OTLP trace service's one method.
const exportMethod = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

// Backoff between attempts, and the longest one attempt may take.
const (
	firstBackoff   = 100 * time.Millisecond
	maxBackoff     = 5 * time.Second
	attemptTimeout = 10 * time.Second
)

// Exporter sends spans to one collector. It implements spans.Exporter.
type Exporter struct {
	conn     *grpc.ClientConn
	log      logr.Logger
	resource []attribute.KeyValue

	mu  sync.Mutex // one export at a time: buf is reused
	buf []byte
}

var _ spans.Exporter = (*Exporter)(nil)

// New returns an exporter to the collector at endpoint (host:port, plain
// gRPC without TLS) for the component named service (its resource's
// service.name). It does not connect until the first export.
func New(endpoint, service string, log logr.Logger) (*Exporter, error) {
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("otlp exporter to %s: %w", endpoint, err)
	}
	return &Exporter{conn: conn, log: log, resource: []attribute.KeyValue{attribute.String("service.name", service)}}, nil
}

// Export sends batch, retrying transient failures until ctx ends.
func (e *Exporter) Export(ctx context.Context, batch []*spans.Span) error {
	if len(batch) == 0 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buf = AppendRequest(e.buf[:0], e.resource, batch)
	backoff := firstBackoff
	for {
		var resp partialSuccess
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		err := e.conn.Invoke(actx, exportMethod, rawMessage(e.buf), &resp, grpc.ForceCodecV2(codec{}))
		cancel()
		if err == nil {
			if resp.rejected > 0 || resp.message != "" {
				e.log.Info("the collector rejected spans", "rejected", resp.rejected, "message", resp.message)
			}
			return nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return fmt.Errorf("export %d spans: %w", len(batch), err)
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		backoff = min(2*backoff, maxBackoff)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("export %d spans: %w (last attempt: %w)", len(batch), ctx.Err(), err)
		}
	}
}

// retryable reports whether err is worth another attempt.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Aborted, codes.ResourceExhausted, codes.DeadlineExceeded:
		return true
	}
	return false
}

// Close closes the connection.
func (e *Exporter) Close() error {
	if err := e.conn.Close(); err != nil {
		return fmt.Errorf("close the otlp exporter: %w", err)
	}
	return nil
}

// rawMessage is an encoded request.
type rawMessage []byte

// partialSuccess is the part of ExportTraceServiceResponse we read.
type partialSuccess struct {
	rejected int64
	message  string
}

// codec sends a rawMessage as it is and reads the response's partial
// success. It is named "proto", so the content type is OTLP's.
type codec struct{}

func (codec) Name() string { return "proto" }

func (codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(rawMessage)
	if !ok {
		return nil, fmt.Errorf("otlp codec: cannot marshal %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(m)}, nil
}

func (codec) Unmarshal(data mem.BufferSlice, v any) error {
	ps, ok := v.(*partialSuccess)
	if !ok {
		return fmt.Errorf("otlp codec: cannot unmarshal into %T", v)
	}
	b := data.Materialize()
	// ExportTraceServiceResponse{partial_success = 1: {rejected_spans = 1, error_message = 2}}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errBadResponse
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			m, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return errBadResponse
			}
			b = b[n:]
			if err := ps.decode(m); err != nil {
				return err
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return errBadResponse
		}
		b = b[n:]
	}
	return nil
}

func (ps *partialSuccess) decode(b []byte) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errBadResponse
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return errBadResponse
			}
			ps.rejected, b = int64(v), b[n:]
		case num == 2 && typ == protowire.BytesType:
			v, n := protowire.ConsumeString(b)
			if n < 0 {
				return errBadResponse
			}
			ps.message, b = v, b[n:]
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return errBadResponse
			}
			b = b[n:]
		}
	}
	return nil
}

var errBadResponse = errors.New("otlp codec: malformed ExportTraceServiceResponse")
