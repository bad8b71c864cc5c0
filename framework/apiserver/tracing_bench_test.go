package apiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/converge-dev/converge/framework/tracing/spans"
)

// BenchmarkTracedRequest is the request span's own cost: traced() around a
// handler that does nothing, without tracing, with sampling 0 and with every
// request sampled (spans dropped, not exported).
//
//	go test -run '^$' -bench BenchmarkTracedRequest -benchmem ./framework/apiserver/
func BenchmarkTracedRequest(b *testing.B) {
	for _, tc := range []struct {
		name string
		tp   trace.TracerProvider
	}{
		{"off", nil},
		{"sampled0", spans.New(spans.Options{Sampling: 0})},
		{"sampled1", spans.New(spans.Options{Sampling: 1})},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := &Server{opts: Options{TracerProvider: tc.tp}}
			h := s.traced(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusCreated) }))
			r := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/default/configmaps", nil)
			r.Header.Set("User-Agent", "bench")
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
	}
}
