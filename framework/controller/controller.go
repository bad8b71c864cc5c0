package controller

import (
	"context"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"runtime/debug"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/workqueue"
)

// Sentinel errors.
var (
	// ErrStarted is returned by Start when the controller already ran.
	ErrStarted = errors.New("controller: already started")
	// ErrCacheSync is returned by Start when a source did not sync in time.
	ErrCacheSync = errors.New("controller: timed out waiting for caches to sync")
)

// DefaultCacheSyncTimeout bounds how long Start waits for sources to sync.
const DefaultCacheSyncTimeout = 2 * time.Minute

// Options configure a Controller. The zero value means defaults.
type Options struct {
	// MaxConcurrentReconciles is the number of workers (default 1).
	MaxConcurrentReconciles int
	// RateLimiter decides the backoff of failed keys (default
	// workqueue.DefaultControllerRateLimiter).
	RateLimiter workqueue.RateLimiter[reconcile.Request]
	// ReconciliationTimeout, if positive, bounds each Reconcile call through
	// its ctx.
	ReconciliationTimeout time.Duration
	// CacheSyncTimeout bounds the wait for sources to sync (default
	// DefaultCacheSyncTimeout).
	CacheSyncTimeout time.Duration
	// Logger is the base logger; "controller" is added (default: discard).
	Logger logr.Logger
	// Registry, if set, receives the controller and work queue metrics.
	Registry prometheus.Registerer
	// SkipLeaderElection makes NeedLeaderElection report false, so a manager
	// runs the controller on every replica, leader or not.
	SkipLeaderElection bool
	// TracerProvider, if set, records a span per reconcile (the API calls
	// the reconciler makes with its ctx are its children).
	TracerProvider trace.TracerProvider
}

func (o *Options) complete() {
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 1
	}
	if o.RateLimiter == nil {
		o.RateLimiter = workqueue.DefaultControllerRateLimiter[reconcile.Request]()
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
}

// Source adds keys to a controller's queue. Start registers the source and
// returns without blocking; events are delivered until ctx ends.
type Source interface {
	Start(ctx context.Context, q handler.Queue) error
}

// SyncingSource is a Source whose initial state must be loaded before workers
// start (an informer). WaitForSync blocks until it has synced or ctx ends and
// reports whether it synced.
type SyncingSource interface {
	WaitForSync(ctx context.Context) bool
}

// Controller runs one reconciler over the keys its sources produce. It is a
// manager Runnable. Build it with New.
type Controller struct {
	name    string
	r       reconcile.Reconciler
	opts    Options
	log     logr.Logger
	metrics *metrics

	mu      sync.Mutex
	sources []Source                            // guarded by mu; registered before Start
	started bool                                // guarded by mu
	ctx     context.Context                     // the running Start's ctx; guarded by mu
	queue   *workqueue.Typed[reconcile.Request] // set while running; guarded by mu

	errMu     sync.Mutex
	lastErr   string    // the last reconcile error; guarded by errMu
	lastErrAt time.Time // when it happened; guarded by errMu
}

// LastError returns the message of the last reconcile that failed (a
// returned error, a terminal one or a panic) and when it failed; "" when none
// has.
func (c *Controller) LastError() (string, time.Time) {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.lastErr, c.lastErrAt
}

// New returns a controller named name (used in logs and metrics; it should be
// unique within a process) that calls r. It does nothing until Start.
func New(name string, r reconcile.Reconciler, opts Options) (*Controller, error) {
	var errs []error
	if name == "" {
		errs = append(errs, errors.New("controller: name is required"))
	}
	if r == nil {
		errs = append(errs, errors.New("controller: reconciler is required"))
	}
	if opts.ReconciliationTimeout < 0 {
		errs = append(errs, errors.New("controller: ReconciliationTimeout must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	opts.complete()
	c := &Controller{
		name:    name,
		r:       r,
		opts:    opts,
		log:     opts.Logger.WithValues("controller", name),
		metrics: newMetrics(opts.Registry),
	}
	c.metrics.forController(name, opts.MaxConcurrentReconciles)
	return c, nil
}

// Name returns the controller's name.
func (c *Controller) Name() string { return c.name }

// NeedLeaderElection reports whether the controller must only run on the
// leader (true unless Options.SkipLeaderElection).
func (c *Controller) NeedLeaderElection() bool { return !c.opts.SkipLeaderElection }

// Watch adds a source. Sources added before Start are started by Start; a
// source added while running is started at once (without waiting for sync).
func (c *Controller) Watch(src Source) error {
	if src == nil {
		return errors.New("controller: nil source")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.queue != nil {
		if err := src.Start(c.ctx, c.queue); err != nil {
			return fmt.Errorf("controller %s: start source: %w", c.name, err)
		}
	}
	c.sources = append(c.sources, src)
	return nil
}

// Start runs the controller until ctx ends (see the package documentation).
// A controller runs once: a second Start returns ErrStarted.
func (c *Controller) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return ErrStarted
	}
	c.started = true
	var mp workqueue.MetricsProvider
	if c.opts.Registry != nil {
		mp = workqueue.NewPrometheusMetrics(c.opts.Registry)
	}
	q := workqueue.New(workqueue.Options[reconcile.Request]{
		Name:            c.name,
		RateLimiter:     c.opts.RateLimiter,
		MetricsProvider: mp,
	})
	defer q.ShutDown()
	c.ctx, c.queue = ctx, q
	sources := c.sources
	for _, src := range sources {
		if err := src.Start(ctx, q); err != nil {
			c.mu.Unlock()
			return fmt.Errorf("controller %s: start source: %w", c.name, err)
		}
	}
	c.mu.Unlock()

	log := c.log
	log.V(1).Info("Waiting for sources to sync")
	syncCtx, cancel := context.WithTimeout(ctx, c.opts.CacheSyncTimeout)
	for _, src := range sources {
		if s, ok := src.(SyncingSource); ok && !s.WaitForSync(syncCtx) {
			cancel()
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("controller %s: %w", c.name, ErrCacheSync)
		}
	}
	cancel()

	log.Info("Starting workers", "workers", c.opts.MaxConcurrentReconciles)
	var wg sync.WaitGroup
	for range c.opts.MaxConcurrentReconciles {
		wg.Go(func() {
			for c.processNext(ctx, q) {
			}
		})
	}
	<-ctx.Done()
	log.Info("Stopping workers")
	q.ShutDown()
	wg.Wait()
	log.Info("All workers stopped")
	return nil
}

// processNext reconciles one key; it returns false once the queue shut down.
func (c *Controller) processNext(ctx context.Context, q *workqueue.Typed[reconcile.Request]) bool {
	req, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(req)
	if ctx.Err() != nil {
		return true // stopping: drain without reconciling
	}
	workers := c.metrics.workers.WithLabelValues(c.name)
	workers.Inc()
	defer workers.Dec()
	c.reconcileHandler(ctx, q, req)
	return true
}

// reconcileHandler applies the retry contract of package reconcile.
func (c *Controller) reconcileHandler(ctx context.Context, q *workqueue.Typed[reconcile.Request], req reconcile.Request) {
	log := c.log.WithValues("namespace", req.Namespace, "name", req.Name, "reconcileID", uuid.NewString())
	ctx = logr.NewContext(ctx, log)
	if c.opts.ReconciliationTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.ReconciliationTimeout)
		defer cancel()
	}

	var span trace.Span
	if c.opts.TracerProvider != nil {
		ctx, span = c.opts.TracerProvider.Tracer("converge/controller").Start(ctx, "Reconcile "+c.name,
			trace.WithAttributes(attribute.String("controller", c.name),
				attribute.String("namespace", req.Namespace), attribute.String("name", req.Name)))
	}
	start := time.Now()
	res, err := c.reconcile(ctx, log, req)
	c.metrics.duration.WithLabelValues(c.name).Observe(time.Since(start).Seconds())
	if span != nil {
		endReconcileSpan(span, res, err)
	}

	if err != nil && !apierrors.IsNotFound(err) {
		c.errMu.Lock()
		c.lastErr, c.lastErrAt = err.Error(), time.Now()
		c.errMu.Unlock()
	}
	switch {
	case err != nil && reconcile.IsTerminal(err):
		q.Forget(req)
		c.metrics.total.WithLabelValues(c.name, labelError).Inc()
		c.metrics.errors.WithLabelValues(c.name).Inc()
		c.metrics.terminalErrors.WithLabelValues(c.name).Inc()
		log.Error(err, "Reconciler error; not retrying")
	case err != nil && apierrors.IsNotFound(err):
		q.Forget(req)
		c.metrics.total.WithLabelValues(c.name, labelSuccess).Inc()
		log.V(1).Info("Reconcile ended with NotFound; treated as success", "reason", err.Error())
	case err != nil:
		q.AddRateLimited(req)
		c.metrics.total.WithLabelValues(c.name, labelError).Inc()
		c.metrics.errors.WithLabelValues(c.name).Inc()
		log.Error(err, "Reconciler error; retrying with backoff")
	case res.RequeueAfter > 0:
		q.Forget(req)
		q.AddAfter(req, res.RequeueAfter)
		c.metrics.total.WithLabelValues(c.name, labelRequeueAfter).Inc()
	default:
		q.Forget(req)
		c.metrics.total.WithLabelValues(c.name, labelSuccess).Inc()
	}
}

// reconcile calls the reconciler and turns a panic into an error.
func (c *Controller) reconcile(ctx context.Context, log logr.Logger, req reconcile.Request) (res reconcile.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.metrics.panics.WithLabelValues(c.name).Inc()
			log.Error(fmt.Errorf("%v", p), "Observed a panic in reconciler", "stack", string(debug.Stack()))
			res, err = reconcile.Result{}, fmt.Errorf("panic in reconciler: %v [recovered]", p)
		}
	}()
	return c.r.Reconcile(ctx, req)
}

// endReconcileSpan records the result of a reconcile on its span and ends it.
func endReconcileSpan(span trace.Span, res reconcile.Result, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	if res.RequeueAfter > 0 {
		span.SetAttributes(attribute.String("requeueAfter", res.RequeueAfter.String()))
	}
	span.End()
}
