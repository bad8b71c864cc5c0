package spans

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// Exporter sends ended spans somewhere. Export is called from one goroutine
// at a time, with at most Options.BatchSize spans; the slice is reused after
// it returns, the spans are not.
type Exporter interface {
	Export(ctx context.Context, spans []*Span) error
}

// Options configure a Provider. The zero value of a field means the SDK's
// default.
type Options struct {
	// Sampling is the ratio of new traces recorded, from 0 to 1. A span
	// with a parent follows its parent's decision.
	Sampling float64
	// Exporter receives the ended spans; nil drops them.
	Exporter Exporter
	// Logger receives export errors and dropped-span counts.
	Logger logr.Logger
	// QueueSize bounds the spans waiting for export (2048).
	QueueSize int
	// BatchSize is the most spans exported at once (512).
	BatchSize int
	// Interval is the longest a span waits for export (5 s).
	Interval time.Duration
	// ExportTimeout bounds one export, its retries included (30 s).
	ExportTimeout time.Duration
}

// defaultTracerName names a tracer asked for with no name, as the SDK does.
const defaultTracerName = "go.opentelemetry.io/otel/sdk/tracer"

// Provider is a trace.TracerProvider. Create it with New; Shutdown stops it.
type Provider struct {
	embedded.TracerProvider

	sampler sampler
	batch   *batcher // nil without an exporter

	mu      sync.Mutex
	tracers map[scopeKey]*tracer // written under mu
	byName  sync.Map             // name → *tracer, for Tracer(name) without options
}

var _ trace.TracerProvider = (*Provider)(nil)

// New returns a provider for o and starts its batcher.
func New(o Options) *Provider {
	p := &Provider{sampler: newSampler(o.Sampling), tracers: map[scopeKey]*tracer{}}
	if o.Exporter != nil {
		p.batch = newBatcher(o)
	}
	return p
}

// Scope is the instrumentation scope of a tracer.
type Scope struct {
	Name, Version, SchemaURL string
	Attributes               attribute.Set
}

type scopeKey struct {
	name, version, schemaURL string
	attrs                    attribute.Distinct
}

// Tracer returns the tracer of the instrumentation scope name (one per
// scope: asking again returns the same).
func (p *Provider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	if len(opts) == 0 {
		if t, ok := p.byName.Load(name); ok {
			return t.(*tracer)
		}
	}
	c := trace.NewTracerConfig(opts...)
	if name == "" {
		name = defaultTracerName
	}
	attrs := c.InstrumentationAttributes()
	k := scopeKey{name: name, version: c.InstrumentationVersion(), schemaURL: c.SchemaURL(), attrs: attrs.Equivalent()}
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.tracers[k]
	if !ok {
		t = &tracer{p: p, scope: &Scope{Name: name, Version: k.version, SchemaURL: k.schemaURL, Attributes: attrs}}
		p.tracers[k] = t
	}
	if len(opts) == 0 {
		p.byName.Store(name, t)
	}
	return t
}

// ForceFlush exports the spans ended so far.
func (p *Provider) ForceFlush(ctx context.Context) error {
	if p.batch == nil {
		return nil
	}
	return p.batch.flush(ctx)
}

// Shutdown exports the spans ended so far and stops the batcher; spans ended
// afterwards are dropped. When ctx ends first, the export in progress is
// cancelled and ctx's error returned.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p.batch == nil {
		return nil
	}
	return p.batch.shutdown(ctx)
}

// Dropped is the number of spans dropped because the queue was full or the
// provider shut down.
func (p *Provider) Dropped() uint64 {
	if p.batch == nil {
		return 0
	}
	return p.batch.dropped.Load()
}

// errShutdown is returned by ForceFlush after Shutdown.
var errShutdown = errors.New("spans: provider shut down")
