package manager

import (
	"context"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/healthz"
	"github.com/converge-dev/converge/framework/leaderelection"
	"github.com/converge-dev/converge/framework/record"
	"github.com/converge-dev/converge/framework/scheme"
)

// Sentinel errors.
var (
	// ErrStarted is returned by Start when the manager already ran.
	ErrStarted = errors.New("manager: already started")
	// ErrShutdownTimeout is returned by Start when Runnables did not stop
	// within GracefulShutdownTimeout.
	ErrShutdownTimeout = errors.New("manager: graceful shutdown timed out")
)

// DefaultGracefulShutdownTimeout bounds shutdown when Options leave it zero.
const DefaultGracefulShutdownTimeout = 30 * time.Second

// Runnable is something the manager runs. Start blocks until ctx ends (then
// returns nil) or it fails.
type Runnable interface {
	Start(ctx context.Context) error
}

// RunnableFunc adapts a function to a Runnable.
type RunnableFunc func(ctx context.Context) error

var _ Runnable = RunnableFunc(nil)

// Start calls f(ctx).
func (f RunnableFunc) Start(ctx context.Context) error { return f(ctx) }

// LeaderElectionRunnable is implemented by Runnables that say whether they need
// leadership. Runnables without it need leadership.
type LeaderElectionRunnable interface {
	NeedLeaderElection() bool
}

// Options configure a Manager. The zero value means defaults.
type Options struct {
	// Scheme knows the typed objects (default: an empty scheme).
	Scheme *scheme.Scheme
	// Mapper maps kinds to resources (default: discovery-based).
	Mapper client.RESTMapper
	// Logger is the base logger of everything the manager runs (default:
	// discard).
	Logger logr.Logger

	// MetricsBindAddress is where /metrics is served ("" disables the server;
	// "127.0.0.1:0" picks a free port, see MetricsAddr).
	MetricsBindAddress string
	// HealthProbeBindAddress is where /healthz and /readyz are served (""
	// disables the server).
	HealthProbeBindAddress string

	// LeaderElection makes leader-elected Runnables run only while this
	// process holds the Lease LeaderElectionNamespace/LeaderElectionID.
	LeaderElection bool
	// LeaderElectionID names the Lease (required with LeaderElection).
	LeaderElectionID string
	// LeaderElectionNamespace holds the Lease (default "default").
	LeaderElectionNamespace string
	// LeaderElectionIdentity names this candidate (default hostname_uuid).
	LeaderElectionIdentity string
	// LeaseDuration, RenewDeadline, RetryPeriod tune the election (defaults
	// 15 s, 10 s, 2 s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration

	// GracefulShutdownTimeout bounds shutdown (default 30 s).
	GracefulShutdownTimeout time.Duration

	// TracerProvider, if set, records a span per reconcile of every
	// controller the builder makes (see framework/tracing).
	TracerProvider trace.TracerProvider

	// DefaultTransform, if set, is applied to every object of the informers
	// created without a Transform of their own (e.g. cache.StripManagedFields,
	// as controller-runtime's cache DefaultTransform).
	DefaultTransform func(api.Object) api.Object
}

func (o *Options) complete() {
	if o.Scheme == nil {
		o.Scheme = scheme.New()
	}
	if o.LeaderElectionNamespace == "" {
		o.LeaderElectionNamespace = "default"
	}
	if o.LeaderElectionIdentity == "" {
		host, _ := os.Hostname()
		o.LeaderElectionIdentity = host + "_" + uuid.NewString()
	}
	if o.GracefulShutdownTimeout == 0 {
		o.GracefulShutdownTimeout = DefaultGracefulShutdownTimeout
	}
}

func (o *Options) validate() error {
	var errs []error
	if o.LeaderElection && o.LeaderElectionID == "" {
		errs = append(errs, errors.New("manager: LeaderElectionID is required with LeaderElection"))
	}
	if o.GracefulShutdownTimeout < 0 {
		errs = append(errs, errors.New("manager: GracefulShutdownTimeout must not be negative"))
	}
	return errors.Join(errs...)
}

// Manager runs caches, controllers and other Runnables. Create it with New.
type Manager struct {
	opts      Options
	client    *client.Client
	informers *cache.SharedInformers
	registry  *prometheus.Registry
	log       logr.Logger
	elector   *leaderelection.Elector // nil without leader election
	healthz   healthz.Handler
	readyz    healthz.Handler
	isLeader  prometheus.Gauge

	leaderGroup *group // Runnables that need leadership
	otherGroup  *group // Runnables that do not

	mu          sync.Mutex
	started     bool   // guarded by mu
	metricsAddr string // guarded by mu
	healthAddr  string // guarded by mu
	recorders   map[string]*record.Recorder
}

// New builds a Manager talking to the API server of cfg.
func New(cfg *client.Config, opts Options) (*Manager, error) {
	opts.complete()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: opts.Scheme, Mapper: opts.Mapper})
	if err != nil {
		return nil, fmt.Errorf("manager: client: %w", err)
	}
	m := &Manager{
		opts:      opts,
		client:    c,
		informers: cache.NewSharedInformersWithOptions(c, cache.SharedOptions{DefaultTransform: opts.DefaultTransform}),
		registry:  prometheus.NewRegistry(),
		log:       opts.Logger,
		recorders: map[string]*record.Recorder{},
	}
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.isLeader = prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "leader_election_master_status",
		Help:        "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.",
		ConstLabels: prometheus.Labels{"name": opts.LeaderElectionID},
	})
	if opts.LeaderElection {
		m.registry.MustRegister(m.isLeader)
		m.elector, err = leaderelection.New(leaderelection.Config{
			Client:        c,
			Namespace:     opts.LeaderElectionNamespace,
			Name:          opts.LeaderElectionID,
			Identity:      opts.LeaderElectionIdentity,
			LeaseDuration: opts.LeaseDuration,
			RenewDeadline: opts.RenewDeadline,
			RetryPeriod:   opts.RetryPeriod,
			Logger:        opts.Logger,
		})
		if err != nil {
			return nil, fmt.Errorf("manager: %w", err)
		}
	}
	m.leaderGroup = newGroup(m.log)
	m.otherGroup = newGroup(m.log)
	return m, nil
}

// Client returns the manager's client (uncached: every call is a request).
func (m *Manager) Client() *client.Client { return m.client }

// Scheme returns the manager's scheme.
func (m *Manager) Scheme() *scheme.Scheme { return m.opts.Scheme }

// Informers returns the shared informers the manager runs.
func (m *Manager) Informers() *cache.SharedInformers { return m.informers }

// Reader reads from the manager's informers with the Get and List calls of
// Client, for kinds that have an informer (see cache.Reader).
func (m *Manager) Reader() *cache.Reader { return cache.NewReader(m.informers) }

// Logger returns the manager's base logger.
func (m *Manager) Logger() logr.Logger { return m.log }

// Registry returns the manager's Prometheus registry, served on /metrics.
func (m *Manager) Registry() *prometheus.Registry { return m.registry }

// TracerProvider returns Options.TracerProvider (nil when not tracing).
func (m *Manager) TracerProvider() trace.TracerProvider { return m.opts.TracerProvider }

// EventRecorder returns the event recorder of component name (one per name).
func (m *Manager) EventRecorder(name string) *record.Recorder {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recorders[name]
	if !ok {
		r = record.New(m.client, name, m.log)
		m.recorders[name] = r
	}
	return r
}

// IsLeader reports whether leader-elected Runnables may run: always true
// without leader election once started.
func (m *Manager) IsLeader() bool {
	if m.elector == nil {
		return m.leaderGroup.isRunning()
	}
	return m.elector.IsLeader()
}

// Add adds r. Before Start it is recorded; after Start it starts at once in
// its group (leader-elected Runnables once leadership is held).
func (m *Manager) Add(r Runnable) error {
	if r == nil {
		return errors.New("manager: nil runnable")
	}
	if le, ok := r.(LeaderElectionRunnable); ok && !le.NeedLeaderElection() {
		return m.otherGroup.add(r)
	}
	return m.leaderGroup.add(r)
}

// Runnables returns every Runnable added to the manager (controllers
// included), leader-elected ones first: hosts such as the operator loader
// read their controllers' state from them.
func (m *Manager) Runnables() []Runnable {
	return append(m.leaderGroup.runnables(), m.otherGroup.runnables()...)
}

// AddHealthzCheck adds a named liveness check served on /healthz.
func (m *Manager) AddHealthzCheck(name string, check healthz.Checker) error {
	return m.healthz.AddCheck(name, check)
}

// AddReadyzCheck adds a named readiness check served on /readyz.
func (m *Manager) AddReadyzCheck(name string, check healthz.Checker) error {
	return m.readyz.AddCheck(name, check)
}

// CacheSyncCheck is a readiness check that passes once every informer has
// synced.
func (m *Manager) CacheSyncCheck() healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithCancel(req.Context())
		cancel() // report the current state without waiting
		if !m.informers.WaitForCacheSync(ctx) {
			return errors.New("informers not synced")
		}
		return nil
	}
}

// MetricsAddr returns the address /metrics listens on, once Start has bound
// it ("" before, or when disabled).
func (m *Manager) MetricsAddr() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.metricsAddr
}

// HealthProbeAddr returns the address /healthz and /readyz listen on, once
// Start has bound it.
func (m *Manager) HealthProbeAddr() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.healthAddr
}

// Start runs the manager; see the package documentation.
func (m *Manager) Start(ctx context.Context) (err error) {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return ErrStarted
	}
	m.started = true
	m.mu.Unlock()

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var failOnce sync.Once
	var failure error // the first Runnable error; written once before stop, read after ctx ended
	fail := func(err error) {
		failOnce.Do(func() {
			failure = err
			stop()
		})
	}
	m.leaderGroup.onErr, m.otherGroup.onErr = fail, fail

	// Servers.
	var servers []*http.Server
	defer func() {
		for _, s := range servers {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			_ = s.Shutdown(sctx)
			cancel()
		}
	}()
	if addr := m.opts.MetricsBindAddress; addr != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{}))
		s, bound, err := serve(addr, mux, fail)
		if err != nil {
			return fmt.Errorf("manager: metrics server: %w", err)
		}
		servers = append(servers, s)
		m.mu.Lock()
		m.metricsAddr = bound
		m.mu.Unlock()
	}
	if addr := m.opts.HealthProbeBindAddress; addr != "" {
		mux := http.NewServeMux()
		mux.Handle("/healthz", &m.healthz)
		mux.Handle("/healthz/", &m.healthz)
		mux.Handle("/readyz", &m.readyz)
		mux.Handle("/readyz/", &m.readyz)
		s, bound, err := serve(addr, mux, fail)
		if err != nil {
			return fmt.Errorf("manager: health probe server: %w", err)
		}
		servers = append(servers, s)
		m.mu.Lock()
		m.healthAddr = bound
		m.mu.Unlock()
	}

	// Informers run until the very end, after every Runnable has stopped.
	cacheCtx, stopCache := context.WithCancel(context.WithoutCancel(ctx))
	cacheDone := make(chan struct{})
	go func() {
		defer close(cacheDone)
		_ = m.informers.Start(cacheCtx) // only ErrStarted, impossible: the manager owns it
	}()
	defer func() {
		stopCache()
		<-cacheDone
	}()

	m.otherGroup.start(context.WithoutCancel(ctx))

	electionDone := make(chan struct{})
	if m.elector == nil {
		m.leaderGroup.start(context.WithoutCancel(ctx))
		close(electionDone)
	} else {
		go func() {
			defer close(electionDone)
			m.runElection(ctx, fail)
		}()
	}

	<-ctx.Done()
	m.log.Info("Stopping manager")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.opts.GracefulShutdownTimeout)
	defer cancel()
	var errs []error
	if !m.leaderGroup.stop(shutdownCtx) {
		errs = append(errs, fmt.Errorf("%w: leader-elected runnables still running", ErrShutdownTimeout))
	}
	select {
	case <-electionDone:
	case <-shutdownCtx.Done():
	}
	if m.elector != nil {
		m.isLeader.Set(0)
		if err := m.elector.Release(shutdownCtx); err != nil {
			m.log.Error(err, "Failed to release leader lease")
		}
	}
	if !m.otherGroup.stop(shutdownCtx) {
		errs = append(errs, fmt.Errorf("%w: runnables still running", ErrShutdownTimeout))
	}
	var first error
	failOnce.Do(func() {}) // no failure can be recorded after this point
	first = failure
	if first != nil {
		errs = append([]error{first}, errs...)
	}
	return errors.Join(errs...)
}

// runElection acquires the Lease, starts the leader group and renews until ctx
// ends or leadership is lost (then it calls fail).
func (m *Manager) runElection(ctx context.Context, fail func(error)) {
	if err := m.elector.Acquire(ctx); err != nil {
		return // ctx ended
	}
	m.isLeader.Set(1)
	m.leaderGroup.start(context.WithoutCancel(ctx))
	if err := m.elector.Renew(ctx); err != nil {
		m.isLeader.Set(0)
		fail(err)
	}
}

func serve(addr string, h http.Handler, fail func(error)) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	s := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fail(fmt.Errorf("manager: serve %s: %w", addr, err))
		}
	}()
	return s, ln.Addr().String(), nil
}
