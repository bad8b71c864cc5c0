package spans

import (
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"
)

// sampler decides new traces by trace ID, as sdktrace.TraceIDRatioBased:
// the low 8 bytes of the ID, big-endian and shifted right by one, must be
// below ratio × 2⁶³.
type sampler struct {
	always, never bool
	bound         uint64
}

func newSampler(ratio float64) sampler {
	switch {
	case ratio >= 1:
		return sampler{always: true}
	case ratio <= 0 || ratio != ratio: // NaN samples nothing
		return sampler{never: true}
	}
	return sampler{bound: uint64(ratio * (1 << 63))}
}

// sampled decides the span of trace tid whose parent is psc: the parent's
// decision when there is a valid parent, else the ratio's.
func (s sampler) sampled(psc trace.SpanContext, tid trace.TraceID) bool {
	if psc.IsValid() {
		return psc.IsSampled()
	}
	switch {
	case s.always:
		return true
	case s.never:
		return false
	}
	return binary.BigEndian.Uint64(tid[8:16])>>1 < s.bound
}

// newTraceID returns a random, valid trace ID. math/rand/v2's top-level
// generator is per thread: no lock is shared between requests.
func newTraceID() trace.TraceID {
	var t trace.TraceID
	for !t.IsValid() {
		binary.BigEndian.PutUint64(t[:8], rand.Uint64())
		binary.BigEndian.PutUint64(t[8:], rand.Uint64())
	}
	return t
}

// newSpanID returns a random, valid span ID.
func newSpanID() trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		binary.BigEndian.PutUint64(s[:], rand.Uint64())
	}
	return s
}
