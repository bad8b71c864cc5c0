package apiserver

import (
	"context"
	"github.com/converge-dev/converge/framework/tracing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"net/http"
	"net/http/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/converge-dev/converge/framework/api"
	admissionchain "github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
)

// Metric buckets, as kube-apiserver's.
var (
	requestDurationBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60}
	etcdDurationBuckets    = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60}
	admissionStepBuckets   = []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5}
	webhookBuckets         = []float64{0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25}
)

// metrics are the API server's Prometheus metrics, under kube-apiserver's
// names and labels. The hot path looks up cached label children in maps keyed
// by comparable structs (no allocation once a combination has been seen).
type metrics struct {
	registry *prometheus.Registry
	handler  http.Handler // /metrics

	requests    *prometheus.CounterVec   // apiserver_request_total
	durations   *prometheus.HistogramVec // apiserver_request_duration_seconds
	inflight    *prometheus.GaugeVec     // apiserver_current_inflight_requests
	longRunning *prometheus.GaugeVec     // apiserver_longrunning_requests
	watchEvents *prometheus.CounterVec   // apiserver_watch_events_total
	etcd        *prometheus.HistogramVec // etcd_request_duration_seconds
	admission   *prometheus.HistogramVec // apiserver_admission_step_admission_duration_seconds
	webhooks    *prometheus.HistogramVec // apiserver_admission_webhook_admission_duration_seconds

	inflightMutating, inflightReadOnly prometheus.Gauge

	mu       sync.RWMutex // guards the caches below
	counters map[requestLabels]prometheus.Counter
	timers   map[requestLabels]prometheus.Observer
	running  map[requestLabels]prometheus.Gauge
	etcdOps  map[etcdLabels]prometheus.Observer
	steps    map[stepLabels]prometheus.Observer
}

// requestLabels are a request's label values; code is 0 for the metrics
// without a code label.
type requestLabels struct {
	verb, dryRun, group, version, resource, subresource, scope string
	code                                                       int
}

type etcdLabels struct{ operation, prefix string }

// stepLabels label an admission step or, with name set, a webhook call.
type stepLabels struct {
	name, step string
	op         admissionchain.Operation
	rejected   bool
}

func newMetrics(objects func() map[string]int64) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: requestDurationBuckets,
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inflight_requests",
			Help: "Number of requests currently being served, by kind (mutating or readOnly; long-running requests are not counted).",
		}, []string{"request_kind"}),
		longRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_longrunning_requests",
			Help: "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.",
		}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"}),
		watchEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_watch_events_total",
			Help: "Number of events sent in watch clients",
		}, []string{"group", "version", "resource"}),
		etcd: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "etcd_request_duration_seconds",
			Help:    "Etcd request latency in seconds for each operation and object type.",
			Buckets: etcdDurationBuckets,
		}, []string{"operation", "type"}),
		admission: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_admission_step_admission_duration_seconds",
			Help:    "Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).",
			Buckets: admissionStepBuckets,
		}, []string{"type", "operation", "rejected"}),
		webhooks: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_admission_webhook_admission_duration_seconds",
			Help:    "Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
			Buckets: webhookBuckets,
		}, []string{"name", "type", "operation", "rejected"}),
		counters: map[requestLabels]prometheus.Counter{},
		timers:   map[requestLabels]prometheus.Observer{},
		running:  map[requestLabels]prometheus.Gauge{},
		etcdOps:  map[etcdLabels]prometheus.Observer{},
		steps:    map[stepLabels]prometheus.Observer{},
	}
	m.inflightMutating = m.inflight.WithLabelValues("mutating")
	m.inflightReadOnly = m.inflight.WithLabelValues("readOnly")
	m.registry.MustRegister(m.requests, m.durations, m.inflight, m.longRunning, m.watchEvents, m.etcd, m.admission, m.webhooks,
		storageObjects{desc: prometheus.NewDesc("apiserver_storage_objects",
			"Number of stored objects at the time of last check split by kind.", []string{"resource"}, nil), count: objects},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
	return m
}

// cached returns the child of key in cache, creating it with make.
func cached[K comparable, V any](mu *sync.RWMutex, cache map[K]V, key K, make func() V) V {
	mu.RLock()
	v, ok := cache[key]
	mu.RUnlock()
	if ok {
		return v
	}
	mu.Lock()
	defer mu.Unlock()
	if v, ok := cache[key]; ok {
		return v
	}
	v = make()
	cache[key] = v
	return v
}

// requestLabelsOf derives the labels of a request as kube-apiserver does, for
// the resources and subresources reg serves (the labels of anything else are
// left empty, so that clients cannot create series at will):
// upper-case verbs (LIST, WATCH, GET, POST, PUT, PATCH, DELETE,
// DELETECOLLECTION, APPLY), scope namespace (any request with a namespace,
// a namespace itself included), resource (a named cluster-scoped object) or
// cluster; non-resource requests have only the HTTP method as verb.
func requestLabelsOf(r *http.Request, ri *filters.RequestInfo, reg *registry.Registry) requestLabels {
	l := requestLabels{verb: upperVerb(ri, r.Method)}
	if !ri.IsResourceRequest {
		return l
	}
	res := reg.Get(api.GroupVersionResource{Group: ri.APIGroup, Version: ri.APIVersion, Resource: ri.Resource})
	if res == nil {
		return l
	}
	l.group, l.version, l.resource = ri.APIGroup, ri.APIVersion, ri.Resource
	if sub := ri.Subresource; sub != "" {
		if _, ok := res.Subresources[sub]; ok || (sub == "status" && res.StatusSubresource) || (sub == "scale" && res.Scale != nil) {
			l.subresource = sub
		} else {
			l.subresource = "unknown"
		}
	}
	switch {
	case ri.Namespace != "":
		l.scope = "namespace"
	case ri.Name != "":
		l.scope = "resource"
	default:
		l.scope = "cluster"
	}
	if r.URL.RawQuery != "" && strings.Contains(r.URL.RawQuery, "dryRun") && slices.Contains(r.URL.Query()["dryRun"], "All") {
		l.dryRun = "All"
	}
	return l
}

func upperVerb(ri *filters.RequestInfo, method string) string {
	if !ri.IsResourceRequest {
		switch method {
		case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
			return method
		}
		return "other"
	}
	switch ri.Verb {
	case "get":
		return "GET"
	case "list":
		return "LIST"
	case "watch":
		return "WATCH"
	case "create":
		return "POST"
	case "update":
		return "PUT"
	case "patch":
		return "PATCH" // APPLY for server-side apply: see instrument
	case "delete":
		return "DELETE"
	case "deletecollection":
		return "DELETECOLLECTION"
	}
	return strings.ToUpper(ri.Verb)
}

// statusRecorder remembers the status code a handler wrote. It keeps
// http.Flusher and, through Unwrap, http.ResponseController working.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) Flush() {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// instrument wraps h (the filters and routing) with the request metrics. It
// parses the request info once and hands it on in the context.
func (m *metrics) instrument(h http.Handler, reg *registry.Registry) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ri, ok := filters.RequestInfoFrom(r.Context())
		if !ok {
			ri = filters.NewRequestInfo(r)
			r = r.WithContext(filters.WithRequestInfo(r.Context(), ri))
		}
		l := requestLabelsOf(r, ri, reg)
		if l.verb == "PATCH" && strings.HasPrefix(r.Header.Get("Content-Type"), "application/apply-patch") {
			l.verb = "APPLY"
		}
		if ri.IsLongRunning() {
			g := cached(&m.mu, m.running, l, func() prometheus.Gauge {
				return m.longRunning.WithLabelValues(l.verb, l.group, l.version, l.resource, l.subresource, l.scope, "apiserver")
			})
			g.Inc()
			defer g.Dec()
		} else {
			g := m.inflightReadOnly
			if !ri.IsReadOnly() {
				g = m.inflightMutating
			}
			g.Inc()
			defer g.Dec()
		}
		rec, shared := w.(*statusRecorder) // traced's: one recorder for both
		if !shared {
			rec = &statusRecorder{ResponseWriter: w}
		}
		defer func() {
			code := rec.code
			if code == 0 {
				code = http.StatusOK
			}
			if p := recover(); p != nil {
				code = http.StatusInternalServerError
				defer panic(p)
			}
			if !ri.IsLongRunning() {
				cached(&m.mu, m.timers, l, func() prometheus.Observer {
					return m.durations.WithLabelValues(l.verb, l.dryRun, l.group, l.version, l.resource, l.subresource, l.scope, "apiserver")
				}).Observe(time.Since(start).Seconds())
			}
			l.code = code
			cached(&m.mu, m.counters, l, func() prometheus.Counter {
				return m.requests.WithLabelValues(l.verb, l.dryRun, l.group, l.version, l.resource, l.subresource, l.scope, "apiserver", strconv.Itoa(code))
			}).Inc()
		}()
		h.ServeHTTP(rec, r)
	})
}

// watchEventCounter is the counter of events sent to watchers of a resource.
func (m *metrics) watchEventCounter(group, version, resource string) prometheus.Counter {
	return m.watchEvents.WithLabelValues(group, version, resource)
}

// observeAdmission records one admission step (admit or validate).
func (m *metrics) observeAdmission(step string, op admissionchain.Operation, err error, start time.Time) {
	l := stepLabels{step: step, op: op, rejected: err != nil}
	cached(&m.mu, m.steps, l, func() prometheus.Observer {
		return m.admission.WithLabelValues(step, string(op), strconv.FormatBool(l.rejected))
	}).Observe(time.Since(start).Seconds())
}

// observeWebhook records one webhook call.
func (m *metrics) observeWebhook(name string, mutating bool, op admissionchain.Operation, rejected bool, took time.Duration) {
	typ := "validate"
	if mutating {
		typ = "admit"
	}
	cached(&m.mu, m.steps, stepLabels{name: name, step: typ, op: op, rejected: rejected}, func() prometheus.Observer {
		return m.webhooks.WithLabelValues(name, typ, string(op), strconv.FormatBool(rejected))
	}).Observe(took.Seconds())
}

// storageObjects collects apiserver_storage_objects at scrape time.
type storageObjects struct {
	desc  *prometheus.Desc
	count func() map[string]int64
}

func (c storageObjects) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c storageObjects) Collect(ch chan<- prometheus.Metric) {
	for res, n := range c.count() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), res)
	}
}

// serveMetrics answers /metrics in the Prometheus text format.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	s.metrics.handler.ServeHTTP(w, r)
}

// servePprof answers /debug/pprof/*.
func servePprof(w http.ResponseWriter, r *http.Request) {
	switch strings.TrimPrefix(r.URL.Path, "/debug/pprof/") {
	case "cmdline":
		pprof.Cmdline(w, r)
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		pprof.Index(w, r)
	}
}

// instrumentedStorage times the storage calls (etcd_request_duration_seconds
// with operation and type, the group-resource of the key, as
// kube-apiserver's).
type instrumentedStorage struct {
	storage.Interface
	m *metrics
	// writes holds, per storage prefix ("/registry/<group>/<resource>/"),
	// the highest revision a write through this server produced
	// (*atomic.Int64): reads served from a watch cache wait until the cache
	// shows it (see Server.waitOwnWrites).
	writes *sync.Map
}

// wrote records rev as written under key's prefix.
func (s instrumentedStorage) wrote(key string, rev int64) {
	if s.writes == nil || rev <= 0 {
		return
	}
	prefix := keyPrefix(key)
	v, ok := s.writes.Load(prefix)
	if !ok {
		v, _ = s.writes.LoadOrStore(prefix, new(atomic.Int64))
	}
	last := v.(*atomic.Int64)
	for {
		cur := last.Load()
		if cur >= rev || last.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// span starts the child span of a storage call (a no-op when the request is
// not traced: then its name and attributes are not even built).
func (s instrumentedStorage) span(ctx context.Context, op, key string) (context.Context, trace.Span) {
	if sp := trace.SpanFromContext(ctx); !sp.IsRecording() {
		return ctx, sp
	}
	return tracing.Child(ctx, tracerName, etcdSpanName(op), attribute.String("key", keyPrefix(key)))
}

// etcdSpanName names the span of the storage operation op: a constant for
// the operations instrumentedStorage makes, so that no name is built.
func etcdSpanName(op string) string {
	switch op {
	case "get":
		return "etcd get"
	case "create":
		return "etcd create"
	case "update":
		return "etcd update"
	case "delete":
		return "etcd delete"
	case "list":
		return "etcd list"
	case "count":
		return "etcd count"
	}
	return "etcd " + op
}

func (s instrumentedStorage) observe(op, key string, start time.Time) {
	prefix := keyPrefix(key)
	cached(&s.m.mu, s.m.etcdOps, etcdLabels{op, prefix}, func() prometheus.Observer {
		return s.m.etcd.WithLabelValues(op, groupResourceOfPrefix(prefix))
	}).Observe(time.Since(start).Seconds())
}

func (s instrumentedStorage) Get(ctx context.Context, key string) (storage.KeyValue, error) {
	defer s.observe("get", key, time.Now())
	ctx, span := s.span(ctx, "get", key)
	kv, err := s.Interface.Get(ctx, key)
	tracing.End(span, err)
	return kv, err
}

func (s instrumentedStorage) Create(ctx context.Context, key string, value []byte) (int64, error) {
	defer s.observe("create", key, time.Now())
	ctx, span := s.span(ctx, "create", key)
	rv, err := s.Interface.Create(ctx, key, value)
	tracing.End(span, err)
	if err == nil {
		s.wrote(key, rv)
	}
	return rv, err
}

func (s instrumentedStorage) Update(ctx context.Context, key string, value []byte, expected int64) (int64, error) {
	defer s.observe("update", key, time.Now())
	ctx, span := s.span(ctx, "update", key)
	rv, err := s.Interface.Update(ctx, key, value, expected)
	tracing.End(span, err)
	if err == nil {
		s.wrote(key, rv)
	}
	return rv, err
}

func (s instrumentedStorage) Delete(ctx context.Context, key string, expected int64) (storage.KeyValue, int64, error) {
	defer s.observe("delete", key, time.Now())
	ctx, span := s.span(ctx, "delete", key)
	kv, rv, err := s.Interface.Delete(ctx, key, expected)
	tracing.End(span, err)
	if err == nil {
		s.wrote(key, rv)
	}
	return kv, rv, err
}

func (s instrumentedStorage) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	defer s.observe("list", prefix, time.Now())
	ctx, span := s.span(ctx, "list", prefix)
	res, err := s.Interface.List(ctx, prefix, opts)
	tracing.End(span, err)
	return res, err
}

func (s instrumentedStorage) Count(ctx context.Context, prefix string) (int64, error) {
	defer s.observe("count", prefix, time.Now())
	ctx, span := s.span(ctx, "count", prefix)
	n, err := s.Interface.Count(ctx, prefix)
	tracing.End(span, err)
	return n, err
}

// keyPrefix is "/registry/GROUP/RESOURCE/" of a key (the key itself when it
// has another shape).
func keyPrefix(key string) string {
	rest, ok := strings.CutPrefix(key, "/registry/")
	if !ok {
		return key
	}
	g := strings.IndexByte(rest, '/')
	if g < 0 {
		return key
	}
	r := strings.IndexByte(rest[g+1:], '/')
	if r < 0 {
		return key
	}
	return key[:len("/registry/")+g+1+r+1]
}

// groupResourceOfPrefix turns "/registry/apps/deployments/" into
// "deployments.apps" and "/registry/core/pods/" into "pods".
func groupResourceOfPrefix(prefix string) string {
	rest, ok := strings.CutPrefix(prefix, "/registry/")
	if !ok {
		return prefix
	}
	group, resource, _ := strings.Cut(strings.TrimSuffix(rest, "/"), "/")
	if group == "core" || group == "" {
		return resource
	}
	return resource + "." + group
}

// collectorSet is several collectors registered as one.
type collectorSet []prometheus.Collector

func (c collectorSet) Describe(ch chan<- *prometheus.Desc) {
	for _, x := range c {
		x.Describe(ch)
	}
}

func (c collectorSet) Collect(ch chan<- prometheus.Metric) {
	for _, x := range c {
		x.Collect(ch)
	}
}
