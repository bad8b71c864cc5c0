package spans

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// The SDK's default span limits.
const (
	maxAttributes      = 128
	maxEvents          = 128
	maxLinks           = 128
	maxEventAttributes = 128
	maxLinkAttributes  = 128
)

// inlineAttributes is how many attributes a span holds without another
// allocation (the API server's child spans have at most one), so that a
// span stays in 256 bytes; past them, room for 8 (an API request's span
// sets 8).
const inlineAttributes = 1

// tracer starts spans of one instrumentation scope.
type tracer struct {
	embedded.Tracer
	p     *Provider
	scope *Scope
}

var _ trace.Tracer = (*tracer)(nil)

// Start starts a span under the span of ctx (none with trace.WithNewRoot).
func (t *tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg := trace.NewSpanStartConfig(opts...)
	var psc trace.SpanContext
	if !cfg.NewRoot() {
		psc = trace.SpanContextFromContext(ctx)
	}
	tid := psc.TraceID()
	if !tid.IsValid() {
		tid = newTraceID()
	}
	sampled := t.p.sampler.sampled(psc, tid)
	flags := psc.TraceFlags() &^ trace.FlagsSampled
	if sampled {
		flags |= trace.FlagsSampled
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: newSpanID(), TraceFlags: flags, TraceState: psc.TraceState()})
	if !sampled {
		s := &unsampled{sc: sc, p: t.p}
		return trace.ContextWithSpan(ctx, s), s
	}
	s := &Span{tracer: t, sc: sc, parentID: psc.SpanID(), parentRemote: psc.IsRemote(), name: name, kind: uint8(trace.ValidateSpanKind(cfg.SpanKind())),
		start: cfg.Timestamp()}
	if s.start.IsZero() {
		s.start = time.Now()
	}
	s.attrs = s.inline[:0]
	for _, l := range cfg.Links() {
		s.addLink(l)
	}
	s.setAttributes(cfg.Attributes())
	return trace.ContextWithSpan(ctx, s), s
}

// StartChild starts an internal span of the instrumentation scope scope
// under s, carried by ctx, with the attribute attr if it is valid (the zero
// KeyValue: none): what s.TracerProvider().Tracer(scope).Start(ctx, name,
// trace.WithAttributes(attr)) does, without the options, the tracer lookup
// when s has the same scope, and the sampler (a child of a recording span is
// sampled). The attribute is passed by value so that the caller's need not
// be allocated. framework/tracing.Child uses it.
func (s *Span) StartChild(ctx context.Context, scope, name string, attr attribute.KeyValue) (context.Context, trace.Span) {
	t := s.tracer
	if t.scope.Name != scope || t.scope.Version != "" || t.scope.SchemaURL != "" || t.scope.Attributes.Len() != 0 {
		t = s.tracer.p.Tracer(scope).(*tracer)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: s.sc.TraceID(), SpanID: newSpanID(), TraceFlags: s.sc.TraceFlags() | trace.FlagsSampled,
		TraceState: s.sc.TraceState()})
	c := &Span{tracer: t, sc: sc, parentID: s.sc.SpanID(), name: name, kind: uint8(trace.SpanKindInternal), start: time.Now()}
	c.attrs = c.inline[:0]
	if attr.Valid() {
		c.attrs = append(c.attrs, attr)
	}
	return trace.ContextWithSpan(ctx, c), c
}

// unsampled is a span that records nothing but carries its SpanContext.
type unsampled struct {
	embedded.Span
	sc trace.SpanContext
	p  *Provider
}

func (s *unsampled) End(...trace.SpanEndOption)              {}
func (s *unsampled) AddEvent(string, ...trace.EventOption)   {}
func (s *unsampled) AddLink(trace.Link)                      {}
func (s *unsampled) IsRecording() bool                       { return false }
func (s *unsampled) RecordError(error, ...trace.EventOption) {}
func (s *unsampled) SpanContext() trace.SpanContext          { return s.sc }
func (s *unsampled) SetStatus(codes.Code, string)            {}
func (s *unsampled) SetName(string)                          {}
func (s *unsampled) SetAttributes(...attribute.KeyValue)     {}
func (s *unsampled) TracerProvider() trace.TracerProvider    { return s.p }

// Event is a span event.
type Event struct {
	Name              string
	Time              time.Time
	Attributes        []attribute.KeyValue
	DroppedAttributes int
}

// Link is a span link.
type Link struct {
	SpanContext       trace.SpanContext
	Attributes        []attribute.KeyValue
	DroppedAttributes int
}

// Span is a recorded span. Its mutators are safe for concurrent use and do
// nothing once it ended; its accessors are for exporters, on ended spans.
//
// It is 256 bytes (a size class): the parent is kept as its span ID (a
// recorded span's parent shares its trace ID, flags and trace state), the end
// as the time since the start, and the small fields side by side.
type Span struct {
	embedded.Span
	tracer   *tracer
	sc       trace.SpanContext
	parentID trace.SpanID // invalid for a root span
	mu       sync.Mutex   // guards the fields below (but ended) until ended
	ended    atomic.Bool  // set under mu; read without it by IsRecording

	status       uint8 // a codes.Code
	kind         uint8 // a trace.SpanKind
	parentRemote bool
	name         string
	start        time.Time
	elapsed      time.Duration // from start to end
	attrs        []attribute.KeyValue
	rare         *rare // nil until needed: most spans have none of it
	inline       [inlineAttributes]attribute.KeyValue
}

// rare is what few spans have: events, links, an error's description,
// dropped attributes.
type rare struct {
	events        []Event
	droppedEvents int
	links         []Link
	droppedLinks  int
	description   string
	droppedAttrs  int
}

// more returns s.rare, allocating it if needed. s.mu is held or the span
// is not shared yet.
func (s *Span) more() *rare {
	if s.rare == nil {
		s.rare = &rare{}
	}
	return s.rare
}

var _ trace.Span = (*Span)(nil)

// End ends the span (at the time of trace.WithTimestamp, if given) and
// queues it for export. Only the first call counts.
func (s *Span) End(opts ...trace.SpanEndOption) {
	// Elapsed on the monotonic clock, as the SDK.
	end := s.start.Add(time.Since(s.start))
	s.mu.Lock()
	if s.ended.Load() {
		s.mu.Unlock()
		return
	}
	var cfg trace.SpanConfig
	if len(opts) > 0 {
		cfg = trace.NewSpanEndConfig(opts...)
	}
	if r := recover(); r != nil {
		// Ended by a deferred call while panicking: record the panic and
		// panic on.
		defer panic(r)
		attrs := []attribute.KeyValue{attribute.String("exception.type", typeName(r)), attribute.String("exception.message", fmt.Sprint(r))}
		if cfg.StackTrace() {
			attrs = append(attrs, attribute.String("exception.stacktrace", stack()))
		}
		s.addEvent("exception", time.Now(), attrs)
	}
	if ts := cfg.Timestamp(); !ts.IsZero() {
		end = ts
	}
	s.elapsed = end.Sub(s.start)
	s.ended.Store(true)
	s.mu.Unlock()
	if b := s.tracer.p.batch; b != nil {
		b.enqueue(s)
	}
}

// AddEvent adds an event.
func (s *Span) AddEvent(name string, opts ...trace.EventOption) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended.Load() {
		return
	}
	cfg := trace.NewEventConfig(opts...)
	s.addEvent(name, cfg.Timestamp(), cfg.Attributes())
}

// addEvent adds an event, evicting the oldest beyond the limit. s.mu is held.
func (s *Span) addEvent(name string, at time.Time, attrs []attribute.KeyValue) {
	e := Event{Name: name, Time: at, Attributes: attrs}
	if len(attrs) > maxEventAttributes {
		e.DroppedAttributes = len(attrs) - maxEventAttributes
		e.Attributes = attrs[:maxEventAttributes]
	}
	r := s.more()
	if len(r.events) == maxEvents {
		n := copy(r.events, r.events[1:])
		r.events = r.events[:n]
		r.droppedEvents++
	}
	r.events = append(r.events, e)
}

// AddLink links the span to another; a link with no valid span context, no
// attributes and no trace state is ignored.
func (s *Span) AddLink(l trace.Link) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended.Load() {
		return
	}
	s.addLink(l)
}

// addLink adds a link, evicting the oldest beyond the limit. s.mu is held or
// the span is not shared yet.
func (s *Span) addLink(l trace.Link) {
	if !l.SpanContext.IsValid() && len(l.Attributes) == 0 && l.SpanContext.TraceState().Len() == 0 {
		return
	}
	k := Link{SpanContext: l.SpanContext, Attributes: l.Attributes}
	if len(k.Attributes) > maxLinkAttributes {
		k.DroppedAttributes = len(k.Attributes) - maxLinkAttributes
		k.Attributes = k.Attributes[:maxLinkAttributes]
	}
	r := s.more()
	if len(r.links) == maxLinks {
		n := copy(r.links, r.links[1:])
		r.links = r.links[:n]
		r.droppedLinks++
	}
	r.links = append(r.links, k)
}

// IsRecording reports whether the span has not ended yet.
func (s *Span) IsRecording() bool { return !s.ended.Load() }

// RecordError adds an "exception" event for err (nil: nothing), with its
// type and message (and the stack with trace.WithStackTrace).
func (s *Span) RecordError(err error, opts ...trace.EventOption) {
	if err == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended.Load() {
		return
	}
	opts = append(opts, trace.WithAttributes(attribute.String("exception.type", typeName(err)), attribute.String("exception.message", err.Error())))
	cfg := trace.NewEventConfig(opts...)
	attrs := cfg.Attributes()
	if cfg.StackTrace() {
		attrs = append(attrs, attribute.String("exception.stacktrace", stack()))
	}
	s.addEvent("exception", cfg.Timestamp(), attrs)
}

// typeName names v's type as the SDK: package path and name, or the type's
// literal for unnamed ones (a pointer to a named type, say).
func typeName(v any) string {
	t := reflect.TypeOf(v)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

// stack is the calling goroutine's stack, up to 2 KiB.
func stack() string {
	buf := make([]byte, 2048)
	return string(buf[:runtime.Stack(buf, false)])
}

// SpanContext is the span's identity.
func (s *Span) SpanContext() trace.SpanContext { return s.sc }

// SetStatus sets the status: Ok wins over Error, and Unset changes nothing
// once either is set. The description is kept for Error only.
func (s *Span) SetStatus(code codes.Code, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended.Load() || codes.Code(s.status) > code {
		return
	}
	s.status = uint8(code)
	switch {
	case code == codes.Error && description != "":
		s.more().description = description
	case s.rare != nil:
		s.rare.description = ""
	}
}

// SetName renames the span.
func (s *Span) SetName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended.Load() {
		s.name = name
	}
}

// SetAttributes sets attributes; a key set again keeps its place and takes
// the new value.
func (s *Span) SetAttributes(kvs ...attribute.KeyValue) {
	if len(kvs) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended.Load() {
		s.setAttributes(kvs)
	}
}

// AdoptAttributes is SetAttributes(kvs...) handing kvs over: a span without
// attributes yet keeps kvs' array as its own instead of copying it (an API
// request's span saves an allocation). The caller must not use kvs
// afterwards.
func (s *Span) AdoptAttributes(kvs []attribute.KeyValue) {
	if len(kvs) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended.Load() {
		return
	}
	if len(s.attrs) == 0 {
		// Compacted in place: setAttributes reads each kv before it can
		// write the slot it is in.
		s.attrs = kvs[:0]
	}
	s.setAttributes(kvs)
}

// setAttributes adds kvs. s.mu is held or the span is not shared yet.
func (s *Span) setAttributes(kvs []attribute.KeyValue) {
next:
	for _, kv := range kvs {
		if !kv.Valid() {
			s.more().droppedAttrs++
			continue
		}
		for i := range s.attrs {
			if s.attrs[i].Key == kv.Key {
				s.attrs[i] = kv
				continue next
			}
		}
		if len(s.attrs) == maxAttributes {
			s.more().droppedAttrs++
			continue
		}
		if len(s.attrs) == cap(s.attrs) {
			s.attrs = append(make([]attribute.KeyValue, 0, min(max(8, 2*len(s.attrs), len(s.attrs)+len(kvs)), maxAttributes)), s.attrs...)
		}
		s.attrs = append(s.attrs, kv)
	}
}

// TracerProvider is the provider that started the span.
func (s *Span) TracerProvider() trace.TracerProvider { return s.tracer.p }

// The accessors below are for exporters, on ended spans.

// Name is the span's name.
func (s *Span) Name() string { return s.name }

// Parent is the parent's span context: invalid for a root span (remote if it
// was started with an invalid remote one). A recorded span's valid parent
// was sampled and shares its trace ID, flags and trace state.
func (s *Span) Parent() trace.SpanContext {
	if !s.parentID.IsValid() {
		return trace.SpanContext{}.WithRemote(s.parentRemote)
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: s.sc.TraceID(), SpanID: s.parentID, TraceFlags: s.sc.TraceFlags(),
		TraceState: s.sc.TraceState(), Remote: s.parentRemote})
}

// Kind is the span kind (Internal unless started with another).
func (s *Span) Kind() trace.SpanKind { return trace.SpanKind(s.kind) }

// StartTime is when the span started.
func (s *Span) StartTime() time.Time { return s.start }

// EndTime is when the span ended.
func (s *Span) EndTime() time.Time { return s.start.Add(s.elapsed) }

// Attributes are the span's attributes, one per key, in the order first set.
func (s *Span) Attributes() []attribute.KeyValue { return s.attrs }

// DroppedAttributes counts the attributes dropped (invalid or over the limit).
func (s *Span) DroppedAttributes() int {
	if s.rare == nil {
		return 0
	}
	return s.rare.droppedAttrs
}

// Events are the span's events, oldest first.
func (s *Span) Events() []Event {
	if s.rare == nil {
		return nil
	}
	return s.rare.events
}

// DroppedEvents counts the events evicted by newer ones.
func (s *Span) DroppedEvents() int {
	if s.rare == nil {
		return 0
	}
	return s.rare.droppedEvents
}

// Links are the span's links, oldest first.
func (s *Span) Links() []Link {
	if s.rare == nil {
		return nil
	}
	return s.rare.links
}

// DroppedLinks counts the links evicted by newer ones.
func (s *Span) DroppedLinks() int {
	if s.rare == nil {
		return 0
	}
	return s.rare.droppedLinks
}

// Status is the span's status code and, for Error, its description.
func (s *Span) Status() (codes.Code, string) {
	if s.rare == nil {
		return codes.Code(s.status), ""
	}
	return codes.Code(s.status), s.rare.description
}

// Scope is the instrumentation scope of the tracer that started the span.
func (s *Span) Scope() *Scope { return s.tracer.scope }
