// Package otlpexport sends the spans of framework/tracing/spans to an
// OpenTelemetry collector over OTLP/gRPC: it encodes the
// ExportTraceServiceRequest itself, straight from the ended spans with
// protowire (AppendRequest: no generated structs, one reused buffer), and
// sends the bytes as they are through a gRPC client with a pass-through
// codec.
//
// An export that fails with a transient gRPC status (Unavailable, Aborted,
// ResourceExhausted, a per-attempt DeadlineExceeded) is retried with a
// jittered exponential backoff until it succeeds or its context ends;
// spans a collector rejects (partial success) are logged.
package otlpexport
