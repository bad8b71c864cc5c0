package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/protobuf"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/healthz"
	"github.com/converge-dev/converge/framework/storage"
)

// Options configure a Server. The zero value of every optional field means its
// default.
type Options struct {
	// Storage persists objects. Required.
	Storage storage.Interface
	// Registry lists the served resources. Required.
	Registry *registry.Registry
	// Logger receives the server's logs.
	Logger logr.Logger
	// KubernetesVersion is reported by /version (default "v1.32.0"; kubectl picks its
	// binary from the minor version).
	KubernetesVersion string
	// MaxRequestBytes caps request bodies (default 3 MiB).
	MaxRequestBytes int64
	// MaxObjectBytes caps the stored (JSON) size of one object; larger writes
	// are refused with 413 instead of failing in storage. The default, 1.5 MiB
	// less 4 KiB, is what etcd's default request limit leaves for an object after
	// its key and the transaction around it.
	MaxObjectBytes int64
	// BookmarkInterval is how often watches that allow bookmarks get one (default 30 s).
	BookmarkInterval time.Duration
	// WatchCacheCapacity is the number of events each resource's cache retains
	// (default 4096). Watchers read this ring directly; one that falls more than
	// this many events behind is closed (its client resumes or relists).
	WatchCacheCapacity int
	// Security enables authentication, authorization, audit, in-flight limits
	// and admission (security.go); the zero value enables none of them.
	Security Security
	// TracerProvider, if set, traces requests (tracing.go).
	TracerProvider trace.TracerProvider
	// Collectors are served on /metrics with the server's own metrics (e.g.
	// the priority and fairness filter's).
	Collectors []prometheus.Collector
	// OpenAPIDefinitions, if set, returns the OpenAPI definitions of the
	// kinds without a Resource.Schema (the built-in ones), by name, with
	// references as bare names (openapibuiltin.go). Called once, on the
	// first OpenAPI request; they are published, never used to validate.
	OpenAPIDefinitions func() (map[string]json.RawMessage, error)
	// RemoteVersions, if set, returns the group versions aggregated API
	// servers serve, for discovery (remotediscovery.go); their requests are
	// the Security filters' Inner handler's to route.
	RemoteVersions func() []RemoteVersion
}

func (o *Options) complete() error {
	var errs []error
	if o.Storage == nil {
		errs = append(errs, errors.New("apiserver: Storage is required"))
	}
	if o.Registry == nil {
		errs = append(errs, errors.New("apiserver: Registry is required"))
	}
	if o.KubernetesVersion == "" {
		o.KubernetesVersion = "v1.32.0"
	}
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = 3 << 20
	}
	if o.MaxObjectBytes == 0 {
		o.MaxObjectBytes = 3<<19 - 4<<10
	}
	if o.BookmarkInterval == 0 {
		o.BookmarkInterval = 30 * time.Second
	}
	if o.WatchCacheCapacity == 0 {
		o.WatchCacheCapacity = 4096
	}
	return errors.Join(errs...)
}

// Server serves the Kubernetes REST API for the resources in its registry.
type Server struct {
	opts  Options
	log   logr.Logger
	proto protobuf.Decoder

	ctx context.Context // set by Start; watch caches live as long as it

	mu     sync.Mutex
	caches map[string]*cacheHandle // by storage prefix
	// started holds the same handles as caches, for cacheFor to find a
	// started cache without taking mu.
	started sync.Map // storage prefix → *cacheHandle
	// byResource finds the same handles by the registry's *Resource,
	// without building the storage prefix (cacheFor runs several times per
	// request: admission reads webhook and policy configurations). Filled
	// and cleared with mu held, so it never holds a stopped cache.
	byResource sync.Map // *registry.Resource → *cacheHandle

	discoveryMu    sync.Mutex // guards the OpenAPI document cache below
	discoveryCache map[string][]byte
	openAPIHashes  map[string]string
	discoveryVer   int64
	openAPIV2      *openAPIV2Cache // the /openapi/v2 documents of discoveryVer

	builtinOnce    sync.Once
	builtinOpenAPI *builtinDefs // nil when there are none

	handler http.Handler // serveHTTP behind the Security filters and the metrics
	metrics *metrics
	// ownWrites is the highest revision this server wrote per storage
	// prefix (instrumentedStorage.writes).
	ownWrites sync.Map

	fields  fieldManagers // managedFields bookkeeping per resource version
	applies applyMemo     // applies known to change nothing (applymemo.go)

	readyz healthz.Handler // /readyz: ping and AddReadyzCheck's checks
}

type cacheHandle struct {
	cache  *watchCache
	cancel context.CancelFunc
}

// New validates opts and returns a server. Call Start before serving.
func New(opts Options) (*Server, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, log: opts.Logger, caches: map[string]*cacheHandle{}, readyz: healthz.Handler{Endpoint: "readyz"}}
	if err := s.readyz.AddCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	s.metrics = newMetrics(s.storedObjects)
	if err := s.metrics.registry.Register(collectorSet(opts.Collectors)); err != nil {
		return nil, fmt.Errorf("register metrics collectors: %w", err)
	}
	s.opts.Storage = instrumentedStorage{Interface: opts.Storage, m: s.metrics, writes: &s.ownWrites}
	s.handler = s.traced(s.metrics.instrument(s.securedHandler(http.HandlerFunc(s.serveHTTP)), opts.Registry))
	opts.Registry.OnChange(s.registryChanged)
	return s, nil
}

// Start runs the server's background work (watch caches) until ctx ends. It
// returns immediately; the caches stop when ctx is cancelled.
func (s *Server) Start(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctx = ctx
	s.startCachesLocked()
}

// registryChanged stops the watch caches of resources no longer served and
// starts those of new ones.
func (s *Server) registryChanged() {
	s.fields.reset()
	s.applies.reset()
	served := map[string]bool{}
	for _, r := range s.opts.Registry.All() {
		served[storagePrefix(r)] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for p, h := range s.caches {
		if !served[p] {
			h.cancel()
			delete(s.caches, p)
			s.started.Delete(p)
		}
	}
	s.byResource.Clear()
	s.refreshAdmissionCachesLocked()
	if s.ctx != nil {
		s.startCachesLocked()
	}
}

// startCachesLocked starts the watch cache of every watchable resource that
// has none yet, as kube-apiserver runs one per resource from the start: a
// client that lists (from storage) and then watches from that list's
// resourceVersion finds the cache's history reaching back to it, where a
// cache started by that first watch would begin after it and answer 410
// Gone. Called with mu held.
func (s *Server) startCachesLocked() {
	for _, r := range s.opts.Registry.All() {
		if slices.Contains(r.ServedVerbs(), "watch") {
			s.ensureCacheLocked(r)
		}
	}
}

// cacheFor returns the (started) watch cache of a resource.
func (s *Server) cacheFor(ctx context.Context, res *registry.Resource) (*watchCache, error) {
	h, ok := s.byResource.Load(res)
	if !ok {
		prefix := storagePrefix(res)
		if h, ok = s.started.Load(prefix); ok {
			s.rememberCache(res, prefix)
		}
	}
	if ok {
		if err := h.(*cacheHandle).cache.waitReady(ctx); err != nil {
			return nil, err
		}
		return h.(*cacheHandle).cache, nil
	}
	s.mu.Lock()
	if s.ctx == nil {
		s.mu.Unlock()
		return nil, errors.New("apiserver: Start was not called")
	}
	hs := s.ensureCacheLocked(res)
	s.mu.Unlock()
	if err := hs.cache.waitReady(ctx); err != nil {
		return nil, err
	}
	return hs.cache, nil
}

// rememberCache lets cacheFor find the started cache of prefix by res, when
// res is the registry's own (a Resource made for one request would only
// fill byResource up).
func (s *Server) rememberCache(res *registry.Resource, prefix string) {
	if s.opts.Registry.Get(res.GroupVersionResource()) != res {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.caches[prefix]; ok {
		s.byResource.Store(res, h)
	}
}

// ensureCacheLocked returns the watch cache of res, starting it if needed.
// Called with mu held, after Start.
func (s *Server) ensureCacheLocked(res *registry.Resource) *cacheHandle {
	prefix := storagePrefix(res)
	if h, ok := s.caches[prefix]; ok {
		return h
	}
	cctx, cancel := context.WithCancel(s.ctx)
	fieldsOf := s.storedFields(res)
	namespaced := res.Namespaced
	sets := newFieldSets()
	wc := newWatchCache(s.opts.Storage, prefix, s.opts.WatchCacheCapacity, s.log.WithValues("resource", res.GroupVersionResource().GroupResource().String()),
		func(key string, value []byte, rv int64) (*cachedObject, error) {
			o, err := buildCachedObject(key, value, rv, namespaced, fieldsOf)
			if err == nil {
				sets.share(o)
			}
			return o, err
		})
	h := &cacheHandle{cache: wc, cancel: cancel}
	s.caches[prefix] = h
	s.started.Store(prefix, h)
	if isAdmissionConfig(prefix) {
		s.refreshAdmissionCachesLocked()
	}
	go wc.run(cctx)
	return h
}

// storedFields returns the selectable fields of stored objects of res: the
// storage version's, looked up when an object is read (the versions of a CRD
// are registered one by one, and a watch of any may start the shared cache);
// filterFor converts or renames for the other versions.
func (s *Server) storedFields(res *registry.Resource) func(map[string]any) map[string]string {
	sgvr := res.StorageGroupVersionResource()
	if sgvr == res.GroupVersionResource() {
		return res.SelectableFields
	}
	return func(m map[string]any) map[string]string {
		r := s.opts.Registry.Get(sgvr)
		if r == nil {
			r = res
		}
		if r.SelectableFields == nil {
			return nil
		}
		return r.SelectableFields(m)
	}
}

func buildCachedObject(key string, value []byte, rv int64, namespaced bool, fieldsOf func(map[string]any) map[string]string) (*cachedObject, error) {
	if fieldsOf == nil {
		// Nothing outside metadata is read: the head alone, no map built.
		if h, ok := api.DecodeHead(value); ok {
			return &cachedObject{key: key, rv: rv, data: withResourceVersion(value, rv),
				apiVersion: h.APIVersion, name: h.Name, namespace: h.Namespace, labels: h.Labels,
				fields: objectFields(nil, h.Namespace, namespaced, nil), deleting: h.Deleting}, nil
		}
	}
	decode := decodeStoredFields // the fields below, none of managedFields
	if fieldsOf == nil {
		decode = decodeStoredHead // nothing outside metadata either
	}
	m, err := decode(value, rv)
	if err != nil {
		return nil, err
	}
	meta, _ := m["metadata"].(map[string]any)
	o := &cachedObject{key: key, rv: rv, data: withResourceVersion(value, rv)}
	o.apiVersion, _ = m["apiVersion"].(string)
	o.name, _ = meta["name"].(string)
	o.namespace, _ = meta["namespace"].(string)
	o.labels = api.NestedStringMap(m, "metadata", "labels")
	o.fields = objectFields(m, o.namespace, namespaced, fieldsOf)
	o.deleting = meta["deletionTimestamp"] != nil
	return o, nil
}

// objectFields returns the selectable fields of the decoded object m but
// metadata.name, which is the cached object's name: without it the fields of
// many objects are equal, and the watch cache keeps one map for them (fieldSets).
func objectFields(m map[string]any, namespace string, namespaced bool, fieldsOf func(map[string]any) map[string]string) map[string]string {
	f := map[string]string{}
	if namespaced {
		f["metadata.namespace"] = namespace
	}
	if fieldsOf != nil {
		for k, v := range fieldsOf(m) {
			f[k] = v
		}
	}
	return f
}

// storagePrefix is the key prefix of a resource: /registry/<group|core>/<resource>/,
// of the resource whose storage it shares if any (Resource.StorageResource).
func storagePrefix(r *registry.Resource) string {
	g, res := storageGroupResource(r)
	return "/registry/" + g + "/" + res + "/"
}

// storageKey is the key of one object (built in one concatenation: a create
// builds two).
func storageKey(r *registry.Resource, namespace, name string) string {
	g, res := storageGroupResource(r)
	if r.Namespaced {
		return "/registry/" + g + "/" + res + "/" + namespace + "/" + name
	}
	return "/registry/" + g + "/" + res + "/" + name
}

// storageGroupResource names the group ("core" for the legacy group) and
// resource of r's storage.
func storageGroupResource(r *registry.Resource) (group, resource string) {
	gvr := r.StorageGroupVersionResource()
	if gvr.Group == "" {
		return "core", gvr.Resource
	}
	return gvr.Group, gvr.Resource
}

// Handler returns the HTTP handler of the API.
func (s *Server) Handler() http.Handler {
	return s.handler
}

// recoverPanic, deferred by a handler, turns a panic while serving r into a
// 500 answer and logs it with msg and the stack; http.ErrAbortHandler is
// raised again, as net/http expects.
func (s *Server) recoverPanic(w http.ResponseWriter, r *http.Request, msg string) {
	rec := recover()
	if rec == nil {
		return
	}
	if rec == http.ErrAbortHandler {
		panic(rec)
	}
	buf := make([]byte, 8<<10)
	buf = buf[:runtime.Stack(buf, false)]
	s.log.Error(nil, msg, "method", r.Method, "path", r.URL.Path, "panic", rec, "stack", string(buf))
	writeError(w, internalError("panic: %v", rec))
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	defer s.recoverPanic(w, r, "Panic serving request")
	path := r.URL.Path
	switch {
	case path == "/version" || path == "/version/":
		s.serveVersion(w)
		return
	case path == "/healthz" || path == "/livez" || strings.HasPrefix(path, "/healthz/") || strings.HasPrefix(path, "/livez/"):
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok"))
		return
	case path == "/readyz" || strings.HasPrefix(path, "/readyz/"):
		s.serveReady(w, r)
		return
	case path == "/metrics":
		s.serveMetrics(w, r)
		return
	case path == "/debug/pprof" || strings.HasPrefix(path, "/debug/pprof/"):
		servePprof(w, r)
		return
	case path == "/api" || path == "/api/":
		s.serveAPIVersions(w, r)
		return
	case path == "/apis" || path == "/apis/":
		s.serveAPIGroupList(w, r)
		return
	case strings.HasPrefix(path, "/openapi/v3"):
		s.serveOpenAPIV3(w, r)
		return
	case strings.HasPrefix(path, "/openapi/v2"):
		s.serveOpenAPIV2(w, r)
		return
	}
	parts := splitPath(path)
	if len(parts) == 2 && parts[0] == "api" {
		s.serveResourceList(w, r, api.GroupVersion{Version: parts[1]})
		return
	}
	if len(parts) == 2 && parts[0] == "apis" {
		s.serveAPIGroup(w, r, parts[1])
		return
	}
	if len(parts) == 3 && parts[0] == "apis" {
		s.serveResourceList(w, r, api.GroupVersion{Group: parts[1], Version: parts[2]})
		return
	}
	query := r.URL.Query()
	watchParam := isTrue(query.Get("watch"))
	ri, ok := parseResourcePath(r.Method, parts, watchParam)
	if !ok {
		writeError(w, notFoundPath(path))
		return
	}
	s.serveResource(w, r, ri, query)
}

// serveReady serves /readyz as Kubernetes does (framework/healthz): every
// check, ?verbose to list them, ?exclude=NAME, /readyz/NAME for one; a
// failing check answers 500.
func (s *Server) serveReady(w http.ResponseWriter, r *http.Request) {
	s.readyz.ServeHTTP(w, r)
}

// AddReadyzCheck adds a named check to /readyz (Kubernetes names its own
// poststarthook/<hook>, autoregister-completion, ...); nil from check means
// ready. Names are unique.
func (s *Server) AddReadyzCheck(name string, check func(*http.Request) error) error {
	return s.readyz.AddCheck(name, check)
}

func (s *Server) serveVersion(w http.ResponseWriter) {
	v := strings.TrimPrefix(s.opts.KubernetesVersion, "v")
	major, rest, _ := strings.Cut(v, ".")
	minor, _, _ := strings.Cut(rest, ".")
	writeJSON(w, http.StatusOK, map[string]any{
		"major": major, "minor": minor, "gitVersion": s.opts.KubernetesVersion,
		"gitCommit": "converge", "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z",
		"goVersion": runtime.Version(), "compiler": runtime.Compiler,
		"platform": runtime.GOOS + "/" + runtime.GOARCH,
	})
}

func isTrue(s string) bool { return s == "true" || s == "1" }

// StoredObjects counts the stored objects of each served resource, as
// apiserver_storage_objects reports them (API Priority and Fairness
// estimates lists from them).
func (s *Server) StoredObjects() map[string]int64 { return s.storedObjects() }

// storedObjects counts the stored objects of each served resource (by
// group-resource, "pods", "deployments.apps") for apiserver_storage_objects:
// from the watch cache when the resource has a ready one, else from storage.
func (s *Server) storedObjects() map[string]int64 {
	out := map[string]int64{}
	for _, r := range s.opts.Registry.All() {
		prefix := storagePrefix(r)
		gr := groupResourceOfPrefix(prefix)
		if _, done := out[gr]; done {
			continue
		}
		if h, ok := s.started.Load(prefix); ok {
			if n, ready := h.(*cacheHandle).cache.size(); ready {
				out[gr] = int64(n)
				continue
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		n, err := s.opts.Storage.Count(ctx, prefix)
		cancel()
		if err == nil {
			out[gr] = n
		}
	}
	return out
}

// waitOwnWrites waits (up to a second) until wc shows every write this server
// made under its prefix. Reads with resourceVersion "0" are served from the
// cache, which may trail storage by a moment; a client that wrote through
// this server and then lists or watches from "0" (an informer starting right
// after its creates) thus sees its writes, as it did when the cache was
// started by that first read.
func (s *Server) waitOwnWrites(ctx context.Context, wc *watchCache, prefix string) {
	if v, ok := s.ownWrites.Load(prefix); ok {
		wc.waitForRV(ctx, v.(*atomic.Int64).Load(), time.Second)
	}
}
