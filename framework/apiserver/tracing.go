package apiserver

import (
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/tracing"
)

// Tracing: with Options.TracerProvider set, every request gets a server span
// (its parent the caller's W3C traceparent, when sent), named after what it
// does ("create configmaps", "list pods", "GET /healthz"), with the
// admission steps, webhook calls and storage operations it makes as child
// spans (tracing.Child: nothing is recorded below a span that is not).

const tracerName = "converge/apiserver"

// traced wraps h with the request span.
func (s *Server) traced(h http.Handler) http.Handler {
	if s.opts.TracerProvider == nil {
		return h
	}
	tr := s.opts.TracerProvider.Tracer(tracerName)
	// Built once: a variadic option at each call would be allocated.
	server := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		ri, ok := filters.RequestInfoFrom(ctx)
		if !ok {
			// Parsed once: the metrics and filters below read it from the
			// context.
			ri = filters.NewRequestInfo(r)
			ctx = filters.WithRequestInfo(ctx, ri)
		}
		// Named once it is known to record: an unsampled request does not
		// build the name.
		pctx := tracing.Extract(ctx, r.Header)
		sctx, span := tr.Start(pctx, "", server...)
		defer span.End()
		if !span.IsRecording() {
			// Not sampled: nothing below records. A caller's trace context
			// goes on (webhooks and aggregated APIs get its traceparent, not
			// sampled, and follow its decision); a new, unsampled trace
			// does not: the request goes on without the span.
			switch {
			case pctx != ctx:
				r = r.WithContext(sctx)
			case !ok:
				r = r.WithContext(ctx)
			}
			h.ServeHTTP(w, r)
			return
		}
		// The metrics below share the recorder (instrument uses a
		// *statusRecorder it is handed).
		rec := &statusRecorder{ResponseWriter: w}
		span.SetName(spanName(r, ri))
		h.ServeHTTP(rec, r.WithContext(sctx))
		code := rec.code
		if code == 0 {
			code = http.StatusOK
		}
		// One call, handing the slice over: the span keeps it as its
		// attributes.
		attrs := make([]attribute.KeyValue, 0, 8)
		attrs = append(attrs,
			attribute.String("http.request.method", r.Method),
			attribute.String("url.path", r.URL.Path),
			attribute.String("user_agent.original", r.UserAgent()),
			attribute.Int("http.response.status_code", code))
		if ri.IsResourceRequest {
			attrs = append(attrs, attribute.String("k8s.verb", ri.Verb), attribute.String("k8s.resource", ri.Resource),
				attribute.String("k8s.namespace", ri.Namespace), attribute.String("k8s.name", ri.Name))
		}
		tracing.SetAttributesOwned(span, attrs)
		if code >= 500 {
			span.SetStatus(codes.Error, strconv.Itoa(code))
		}
	})
}

// spanName names a request's span by its verb and resource.
func spanName(r *http.Request, ri *filters.RequestInfo) string {
	if !ri.IsResourceRequest {
		return r.Method + " " + r.URL.Path
	}
	name := ri.Verb + " " + ri.Resource
	if ri.Subresource != "" {
		name += "/" + ri.Subresource
	}
	return name
}
