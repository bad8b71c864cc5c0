package apiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/converge-dev/converge/framework/tracing/spans"
)

// TestTracedContext: what a traced request hands on in its context — its
// recording span when sampled; when not, the caller's trace context (so that
// webhooks and aggregated APIs follow the caller's decision) and nothing for
// a new trace. The status recorder is shared with the metrics.
func TestTracedContext(t *testing.T) {
	const (
		tid      = "4bf92f3577b34da6a3ce929d0e0e4736"
		unsample = "00-" + tid + "-00f067aa0ba902b7-00"
		sample   = "00-" + tid + "-00f067aa0ba902b7-01"
	)
	for _, tc := range []struct {
		name        string
		sampling    float64
		traceparent string
		want        string // the trace ID in the handler's context, "" for none
		recording   bool
	}{
		{"sampled, new trace", 1, "", "any", true},
		{"sampled by the caller", 0, sample, tid, true},
		{"unsampled, new trace", 0, "", "", false},
		{"unsampled by the caller", 1, unsample, tid, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{opts: Options{TracerProvider: spans.New(spans.Options{Sampling: tc.sampling})}, metrics: newMetrics(func() map[string]int64 { return nil })}
			var got trace.SpanContext
			var recording, shared bool
			h := s.traced(s.metrics.instrument(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = trace.SpanContextFromContext(r.Context())
				recording = trace.SpanFromContext(r.Context()).IsRecording()
				_, shared = w.(*statusRecorder)
				w.WriteHeader(http.StatusCreated)
			}), nil))
			r := httptest.NewRequest(http.MethodGet, "/healthz", nil)
			if tc.traceparent != "" {
				r.Header.Set("Traceparent", tc.traceparent)
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			switch {
			case tc.want == "" && got.IsValid():
				t.Errorf("trace context %v handed on, want none", got)
			case tc.want == "any" && !got.IsValid(), tc.want != "" && tc.want != "any" && got.TraceID().String() != tc.want:
				t.Errorf("trace context %v, want trace %s", got, tc.want)
			case got.IsValid() && got.IsSampled() != tc.recording, recording != tc.recording:
				t.Errorf("sampled %v, recording %v; want %v", got.IsSampled(), recording, tc.recording)
			case !shared:
				t.Error("the handler's writer is not a *statusRecorder")
			}
		})
	}
}
