// Package otlpexport sends the spans of framework/tracing/spans to an
// OpenTelemetry collector over OTLP/gRPC: it encodes the
// ExportTraceServiceRequest itself, straight from the ended spans with
// protowire (AppendRequest: no generated structs, one reused buffer), and
// sends the bytes as they are through a gRPC client with a pass-through
// codec.
//
// What it sends is what the OpenTelemetry SDK's exporter sends for the same
// spans (a test decodes both), with two deliberate differences: a link
// carries its span context's trace state (OTLP's Span.Link.trace_state,
// which that exporter leaves out), and a string that is not valid UTF-8
// (which protobuf forbids; that exporter fails the whole batch on it) is
// sent with U+FFFD in place of its invalid bytes.
//
// An export that fails with a transient gRPC status (Unavailable, Aborted,
// ResourceExhausted, a per-attempt DeadlineExceeded) is retried with a
// jittered exponential backoff until it succeeds or its context ends;
// spans a collector rejects (partial success) are logged.
package otlpexport
