// Package spans is Converge's own implementation of the OpenTelemetry trace
// API (go.opentelemetry.io/otel/trace): a TracerProvider whose spans cost a
// few hundred nanoseconds and two allocations (the span, under 512 bytes,
// and the context carrying it), batched to an Exporter.
//
// Semantics follow the OpenTelemetry SDK (sdktrace) so that the two are
// interchangeable, and a test holds them side by side:
//
//   - Sampling is parent-based: a span whose parent (local or remote) is
//     sampled is recorded, one whose parent is not is not; a new trace is
//     sampled when its trace ID falls under the ratio, with sdktrace's
//     TraceIDRatioBased arithmetic, so the same trace ID gets the same
//     decision in both.
//   - An unsampled span records nothing but carries its SpanContext (a new
//     span ID, the sampled flag cleared), so the W3C traceparent still
//     propagates. It is one small allocation besides its context.
//   - Limits are the SDK's defaults: 128 attributes per span (a repeated key
//     keeps its first position and its last value; new keys beyond the limit
//     are dropped and counted), 128 events and 128 links (the oldest evicted
//     and counted), 128 attributes per event and per link.
//   - SetStatus: Error keeps its description, Ok overrides Error, Unset is
//     ignored once set. RecordError adds an "exception" event with
//     exception.type and exception.message. End while panicking records the
//     panic the same way, and panics on.
//
// An ended span is immutable: End hands the span itself to the batcher,
// which exports it without a copy. Exporters read it through the accessors
// (Name, Parent, Attributes, ...), which are only valid on an ended span.
//
// The batcher behaves as the SDK's BatchSpanProcessor with its defaults: a
// queue of 2048 spans, exported in batches of 512 when a batch is full or
// every 5 s; a span ended while the queue is full is dropped and counted, so
// a request never waits for the exporter. Shutdown exports what is queued and
// stops; ForceFlush exports what is queued and returns.
//
// Nothing is global: IDs come from math/rand/v2's per-thread generator (no
// lock), errors of the exporter go to the Options' logr.Logger.
package spans
