package metricsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	metricsv1beta1 "github.com/converge-dev/converge/builtin/api/metrics/v1beta1"
	"github.com/converge-dev/converge/builtin/node/stats"
	"github.com/converge-dev/converge/builtin/podlog"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/fields"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Objects lists the stored JSON of a resource's objects in a namespace (all
// when empty), as apiserver.Server.CachedObjects does.
type Objects func(ctx context.Context, gvr api.GroupVersionResource, namespace string) ([][]byte, int64, error)

// Options configure a Server. The zero value is usable once Attach is called.
type Options struct {
	// Transport reaches the node agents (default: a clone of
	// http.DefaultTransport); Scheme is their URL scheme (default "http").
	Transport http.RoundTripper
	Scheme    string
	// CacheTTL is how long a node's summary is reused (default 2 s).
	CacheTTL time.Duration
	// Timeout bounds one fetch from an agent (default 5 s).
	Timeout time.Duration
	// Logger receives fetch failures at V(1).
	Logger logr.Logger
}

// Server answers metrics.k8s.io requests. Create it with New.
type Server struct {
	opts    Options
	client  *http.Client
	objects atomic.Pointer[Objects]

	mu      sync.Mutex
	entries map[string]*entry // by node name; guarded by mu
}

// entry is one node's cached summary; ready is closed once sum/err are set.
type entry struct {
	at    time.Time
	ready chan struct{}
	sum   *stats.Summary
	err   error
}

var (
	nodesGVR = api.GroupVersionResource{Version: "v1", Resource: "nodes"}
	podsGVR  = api.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// New returns a Server.
func New(opts Options) *Server {
	if opts.Transport == nil {
		opts.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	if opts.Scheme == "" {
		opts.Scheme = "http"
	}
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = 2 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	return &Server{opts: opts, client: &http.Client{Transport: opts.Transport, Timeout: opts.Timeout}, entries: map[string]*entry{}}
}

// Attach gives the server the API server's object lister.
func (s *Server) Attach(objects Objects) { s.objects.Store(&objects) }

// Wrap answers metrics.k8s.io/v1beta1 resource requests and passes every
// other request to next. It needs the request info of the API server's
// filters; without it every request goes to next.
func (s *Server) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ri, ok := filters.RequestInfoFrom(r.Context())
		if !ok || !ri.IsResourceRequest || ri.APIGroup != metricsv1beta1.GroupVersion.Group || ri.APIVersion != metricsv1beta1.GroupVersion.Version ||
			(ri.Resource != "nodes" && ri.Resource != "pods") {
			next.ServeHTTP(w, r)
			return
		}
		out, err := s.serve(r, ri)
		if err == nil && acceptsTable(r) {
			out, err = table(ri, out)
		}
		if err != nil {
			se, ok := err.(*apierrors.StatusError)
			if !ok {
				se = apierrors.NewInternalError(err)
			}
			filters.WriteStatus(w, se)
			return
		}
		b, err := json.Marshal(out)
		if err != nil {
			filters.WriteStatus(w, apierrors.NewInternalError(err))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
	})
}

func (s *Server) serve(r *http.Request, ri *filters.RequestInfo) (any, error) {
	gr := api.GroupResource{Group: metricsv1beta1.GroupVersion.Group, Resource: ri.Resource}
	if ri.Subresource != "" {
		return nil, apierrors.NewNotFound(gr, ri.Name)
	}
	if ri.Verb != "get" && ri.Verb != "list" {
		return nil, apierrors.NewMethodNotSupported(gr, ri.Verb)
	}
	q := r.URL.Query()
	sel, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	fsel, err := fields.Parse(q.Get("fieldSelector"))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	ctx := r.Context()
	if ri.Resource == "nodes" {
		items, err := s.nodeMetrics(ctx, ri.Name, sel, fsel)
		return answer(ri, gr, items, err, func(items []metricsv1beta1.NodeMetrics) any {
			return metricsv1beta1.NodeMetricsList{TypeMeta: listMeta("NodeMetricsList"), Items: items}
		})
	}
	items, err := s.podMetrics(ctx, ri.Namespace, ri.Name, sel, fsel)
	return answer(ri, gr, items, err, func(items []metricsv1beta1.PodMetrics) any {
		return metricsv1beta1.PodMetricsList{TypeMeta: listMeta("PodMetricsList"), Items: items}
	})
}

// answer is the first item of a get (NotFound without one) or the list.
func answer[T any](ri *filters.RequestInfo, gr api.GroupResource, items []T, err error, list func([]T) any) (any, error) {
	switch {
	case err != nil:
		return nil, err
	case ri.Verb == "list":
		return list(items), nil
	case len(items) == 0:
		return nil, apierrors.NewNotFound(gr, ri.Name)
	}
	return items[0], nil
}

func listMeta(kind string) api.TypeMeta {
	return api.TypeMeta{APIVersion: metricsv1beta1.GroupVersion.String(), Kind: kind}
}

// list decodes the objects of gvr in namespace.
func list[T any](ctx context.Context, s *Server, gvr api.GroupVersionResource, namespace string) ([]T, error) {
	objs := s.objects.Load()
	if objs == nil {
		return nil, errors.New("metricsapi: not attached to an API server")
	}
	raw, _, err := (*objs)(ctx, gvr, namespace)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", gvr.Resource, err)
	}
	out := make([]T, 0, len(raw))
	for _, b := range raw {
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("decode %s: %w", gvr.Resource, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// matches applies the label selector and the metadata field selector.
func matches(m *api.ObjectMeta, sel labels.Selector, fsel fields.Selector) bool {
	return sel.Matches(m.Labels) &&
		fsel.Matches(map[string]string{"metadata.name": m.Name, "metadata.namespace": m.Namespace})
}

func (s *Server) nodeMetrics(ctx context.Context, name string, sel labels.Selector, fsel fields.Selector) ([]metricsv1beta1.NodeMetrics, error) {
	nodes, err := list[corev1.Node](ctx, s, nodesGVR, "")
	if err != nil {
		return nil, err
	}
	nodes = slices.DeleteFunc(nodes, func(n corev1.Node) bool {
		return (name != "" && n.Name != name) || !matches(&n.ObjectMeta, sel, fsel)
	})
	sums := s.summaries(ctx, nodes)
	out := []metricsv1beta1.NodeMetrics{}
	for _, n := range nodes {
		sum := sums[n.Name]
		if sum == nil || sum.Node.CPU == nil || sum.Node.CPU.UsageNanoCores == nil || sum.Node.Memory == nil || sum.Node.Memory.WorkingSetBytes == nil {
			continue
		}
		m := metricsv1beta1.NodeMetrics{
			TypeMeta:   api.TypeMeta{APIVersion: metricsv1beta1.GroupVersion.String(), Kind: "NodeMetrics"},
			ObjectMeta: api.ObjectMeta{Name: n.Name, Labels: n.Labels, CreationTimestamp: api.Now()},
			Timestamp:  sum.Node.CPU.Time, Window: window(sum.Node.CPU.WindowSeconds),
			Usage: usage(*sum.Node.CPU.UsageNanoCores, *sum.Node.Memory.WorkingSetBytes),
		}
		out = append(out, m)
	}
	return out, nil
}

func (s *Server) podMetrics(ctx context.Context, namespace, name string, sel labels.Selector, fsel fields.Selector) ([]metricsv1beta1.PodMetrics, error) {
	pods, err := list[corev1.Pod](ctx, s, podsGVR, namespace)
	if err != nil {
		return nil, err
	}
	pods = slices.DeleteFunc(pods, func(p corev1.Pod) bool {
		return (name != "" && p.Name != name) || p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning ||
			!matches(&p.ObjectMeta, sel, fsel)
	})
	out := []metricsv1beta1.PodMetrics{}
	if len(pods) == 0 {
		return out, nil
	}
	nodeNames := map[string]bool{}
	for _, p := range pods {
		nodeNames[p.Spec.NodeName] = true
	}
	all, err := list[corev1.Node](ctx, s, nodesGVR, "")
	if err != nil {
		return nil, err
	}
	nodes := slices.DeleteFunc(all, func(n corev1.Node) bool { return !nodeNames[n.Name] })
	sums := s.summaries(ctx, nodes)
	for _, p := range pods {
		sum := sums[p.Spec.NodeName]
		if sum == nil {
			continue
		}
		if m, ok := podMetric(&p, sum); ok {
			out = append(out, m)
		}
	}
	return out, nil
}

// podMetric finds p in sum; ok is false when any measured container lacks a
// figure or the pod has none.
func podMetric(p *corev1.Pod, sum *stats.Summary) (metricsv1beta1.PodMetrics, bool) {
	for _, ps := range sum.Pods {
		if ps.PodRef.Namespace != p.Namespace || ps.PodRef.Name != p.Name || (ps.PodRef.UID != "" && ps.PodRef.UID != p.UID) {
			continue
		}
		m := metricsv1beta1.PodMetrics{
			TypeMeta:   api.TypeMeta{APIVersion: metricsv1beta1.GroupVersion.String(), Kind: "PodMetrics"},
			ObjectMeta: api.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, CreationTimestamp: api.Now()},
			Containers: []metricsv1beta1.ContainerMetrics{},
		}
		var latest api.Time
		var win float64
		for _, c := range ps.Containers {
			if c.CPU == nil || c.CPU.UsageNanoCores == nil || c.Memory == nil || c.Memory.WorkingSetBytes == nil {
				return metricsv1beta1.PodMetrics{}, false
			}
			m.Containers = append(m.Containers, metricsv1beta1.ContainerMetrics{Name: c.Name, Usage: usage(*c.CPU.UsageNanoCores, *c.Memory.WorkingSetBytes)})
			if c.CPU.Time.After(latest.Time) {
				latest = c.CPU.Time
			}
			win = max(win, c.CPU.WindowSeconds)
		}
		if len(m.Containers) == 0 {
			return metricsv1beta1.PodMetrics{}, false
		}
		m.Timestamp, m.Window = latest, window(win)
		return m, true
	}
	return metricsv1beta1.PodMetrics{}, false
}

// usage renders CPU as nanocores and memory as bytes (in Ki when whole), as
// metrics-server's quantities print.
func usage(nanoCores, bytes uint64) corev1.ResourceList {
	mem := strconv.FormatUint(bytes, 10)
	if bytes%1024 == 0 && bytes > 0 {
		mem = strconv.FormatUint(bytes/1024, 10) + "Ki"
	}
	return corev1.ResourceList{"cpu": {S: strconv.FormatUint(nanoCores, 10) + "n"}, "memory": {S: mem}}
}

func window(seconds float64) api.Duration {
	return api.Duration{Duration: time.Duration(seconds * float64(time.Second)).Round(time.Millisecond)}
}

// summaries fetches (or reuses) the summary of every node, concurrently; a
// node that fails is missing from the result.
func (s *Server) summaries(ctx context.Context, nodes []corev1.Node) map[string]*stats.Summary {
	out := make(map[string]*stats.Summary, len(nodes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range nodes {
		n := &nodes[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			sum, err := s.summary(ctx, n)
			if err != nil {
				s.opts.Logger.V(1).Info("Cannot read node stats", "node", n.Name, "error", err.Error())
				return
			}
			mu.Lock()
			out[n.Name] = sum
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// summary returns n's cached summary, fetching it when older than CacheTTL;
// concurrent requests share one fetch.
func (s *Server) summary(ctx context.Context, n *corev1.Node) (*stats.Summary, error) {
	s.mu.Lock()
	for name, old := range s.entries { // forget nodes nobody asked about for a while (deleted ones)
		if name != n.Name && time.Since(old.at) > 30*s.opts.CacheTTL {
			delete(s.entries, name)
		}
	}
	e := s.entries[n.Name]
	if e == nil || time.Since(e.at) > s.opts.CacheTTL {
		e = &entry{at: time.Now(), ready: make(chan struct{})}
		s.entries[n.Name] = e
		go func() {
			e.sum, e.err = s.fetch(context.WithoutCancel(ctx), n)
			if e.err != nil { // do not cache failures
				s.mu.Lock()
				if s.entries[n.Name] == e {
					delete(s.entries, n.Name)
				}
				s.mu.Unlock()
			}
			close(e.ready)
		}()
	}
	s.mu.Unlock()
	select {
	case <-e.ready:
		return e.sum, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Server) fetch(ctx context.Context, n *corev1.Node) (*stats.Summary, error) {
	host, port, err := podlog.NodeAddress(n)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: s.opts.Scheme, Host: net.JoinHostPort(host, strconv.Itoa(port)), Path: "/stats/summary"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch stats of node %s: %w", n.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch stats of node %s: %s", n.Name, resp.Status)
	}
	var sum stats.Summary
	if err := json.NewDecoder(resp.Body).Decode(&sum); err != nil {
		return nil, fmt.Errorf("decode stats of node %s: %w", n.Name, err)
	}
	return &sum, nil
}

// acceptsTable reports whether the client asked for a meta.k8s.io/v1 Table
// (kubectl get).
func acceptsTable(r *http.Request) bool {
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		p := strings.ReplaceAll(part, " ", "")
		if strings.Contains(p, "as=Table") && strings.Contains(p, "g=meta.k8s.io") {
			return true
		}
	}
	return false
}

// table renders a metrics object or list as a Table with the kind's printer
// columns; rows carry the objects' metadata as PartialObjectMetadata.
func table(ri *filters.RequestInfo, out any) (any, error) {
	p := metricsv1beta1.PodMetricsPrinter()
	if ri.Resource == "nodes" {
		p = metricsv1beta1.NodeMetricsPrinter()
	}
	var objs []any
	switch v := out.(type) {
	case metricsv1beta1.NodeMetricsList:
		for _, it := range v.Items {
			objs = append(objs, it)
		}
	case metricsv1beta1.PodMetricsList:
		for _, it := range v.Items {
			objs = append(objs, it)
		}
	default:
		objs = []any{out}
	}
	now := time.Now()
	rows := make([]any, 0, len(objs))
	for _, o := range objs {
		m, err := registry.ToMap(o)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		cells, err := p.Row(m, now)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		rows = append(rows, map[string]any{"cells": cells, "object": map[string]any{
			"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": m["metadata"]}})
	}
	return map[string]any{"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": map[string]any{},
		"columnDefinitions": p.Columns, "rows": rows}, nil
}
