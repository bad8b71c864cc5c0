package otlpexport_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/converge-dev/converge/framework/tracing/otlpexport"
	"github.com/converge-dev/converge/framework/tracing/spans"
)

// collector fails its first calls with the codes in fail, then answers
// with a partial success.
type collector struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	fail  []codes.Code
	calls int
	spans int
}

func (c *collector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if len(c.fail) > 0 {
		code := c.fail[0]
		c.fail = c.fail[1:]
		return nil, status.Error(code, "not now")
	}
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			c.spans += len(ss.GetSpans())
		}
	}
	return &coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 1, ErrorMessage: "one too many"}}, nil
}

func serve(t *testing.T, c *collector) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, c)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return ln.Addr().String()
}

func ended(n int) []*spans.Span {
	tr := spans.New(spans.Options{Sampling: 1}).Tracer("t")
	var out []*spans.Span
	for range n {
		_, s := tr.Start(context.Background(), "s")
		s.End()
		out = append(out, s.(*spans.Span))
	}
	return out
}

// TestExportRetries: Unavailable is retried with backoff until the
// collector takes the spans; a partial success is logged, not an error.
func TestExportRetries(t *testing.T) {
	t.Parallel()
	c := &collector{fail: []codes.Code{codes.Unavailable, codes.Unavailable}}
	var mu sync.Mutex
	var logged []string
	log := funcr.New(func(prefix, args string) { mu.Lock(); logged = append(logged, args); mu.Unlock() }, funcr.Options{})
	exp, err := otlpexport.New(serve(t, c), "svc", log)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = exp.Close() }()
	start := time.Now()
	if err := exp.Export(t.Context(), ended(3)); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls != 3 || c.spans != 3 {
		t.Errorf("%d calls, %d spans received; want 3 calls (2 retries), 3 spans", c.calls, c.spans)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("two retries within %v: no backoff", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 1 {
		t.Errorf("logged %q, want the partial success", logged)
	}
}

// TestExportGivesUp: a permanent error is not retried; a transient one is
// retried until the context ends.
func TestExportGivesUp(t *testing.T) {
	t.Parallel()
	c := &collector{fail: []codes.Code{codes.InvalidArgument}}
	exp, err := otlpexport.New(serve(t, c), "svc", logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = exp.Close() }()
	err = exp.Export(t.Context(), ended(1))
	c.mu.Lock()
	if status.Code(err) != codes.InvalidArgument || c.calls != 1 {
		t.Errorf("Export = %v after %d calls, want InvalidArgument after 1", err, c.calls)
	}
	c.fail = []codes.Code{codes.Unavailable, codes.Unavailable, codes.Unavailable, codes.Unavailable, codes.Unavailable, codes.Unavailable}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(t.Context(), 250*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := exp.Export(ctx, ended(1)); err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("Export = %v after %v, want an error when the context ends", err, time.Since(start))
	}
}
