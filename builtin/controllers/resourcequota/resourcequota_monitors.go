package resourcequota

import (
	"context"
	"fmt"
	"sync"

	"github.com/converge-dev/converge/builtin/controllers/internal/metawatch"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/restmapper"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/reconcile"
)

// monitors watches the resources that quotas count with
// count/<resource>.<group> and that the controller has no typed informer
// for (any resource, custom ones included): one metadata-only informer per
// resource, started when a quota first counts it. Its store answers the
// counts; its deletions enqueue the quotas of the object's namespace, as
// Kubernetes' quota monitors do. A resource that stops being served drops
// its monitor; the next count starts a new one.
type monitors struct {
	c        *client.Client
	mapper   *restmapper.Mapper
	quotasOf func(ctx context.Context, namespace string) []reconcile.Request

	mu    sync.Mutex
	ctx   context.Context // the controller's, set by Start
	queue handler.Queue
	byGR  map[api.GroupResource]*monitor
}

type monitor struct {
	inf    *cache.Informer[*api.Unstructured]
	cancel context.CancelFunc
}

var _ controller.Source = (*monitors)(nil)

// Start implements controller.Source: monitors start on demand in ctx.
func (m *monitors) Start(ctx context.Context, q handler.Queue) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ctx, m.queue = ctx, q
	return nil
}

// List returns the namespace's objects of gr (their metadata) from gr's
// monitor once it has synced; none when gr is not served.
func (m *monitors) List(ctx context.Context, gr api.GroupResource, namespace string) ([]map[string]any, error) {
	mon, err := m.monitor(ctx, gr)
	if err != nil || mon == nil {
		return nil, err
	}
	if !mon.inf.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("monitor of %s has not synced", gr)
	}
	objs, err := mon.inf.Store().ByIndex(cache.NamespaceIndex, namespace)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", gr, err)
	}
	out := make([]map[string]any, len(objs))
	for i, o := range objs {
		out[i] = o.Object
	}
	return out, nil
}

// monitor returns gr's monitor, starting it; nil when gr is not served.
func (m *monitors) monitor(ctx context.Context, gr api.GroupResource) (*monitor, error) {
	m.mu.Lock()
	mon, ok := m.byGR[gr]
	m.mu.Unlock()
	if ok {
		return mon, nil
	}
	name := gr.Resource
	if gr.Group != "" {
		name += "." + gr.Group
	}
	mapping, err := m.mapper.ResourceFor(ctx, name)
	if restmapper.IsNoMatch(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find resource %s: %w", name, err)
	}
	if mapping.Resource.GroupResource() != gr || !mapping.Namespaced {
		return nil, nil // a short name or singular of something else, or not namespaced
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if mon, ok := m.byGR[gr]; ok {
		return mon, nil
	}
	if m.ctx == nil {
		return nil, fmt.Errorf("monitors not started")
	}
	mctx, cancel := context.WithCancel(m.ctx)
	mon = &monitor{cancel: cancel}
	mon.inf = cache.NewInformer[*api.Unstructured](&metawatch.ListWatch{Client: m.c, GVK: mapping.Kind},
		cache.InformerOptions[*api.Unstructured]{
			Transform: metadataOnly,
			OnError: func(err error) {
				if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
					m.drop(gr, mon)
				}
			},
		})
	queue := m.queue
	mon.inf.AddHandler(func(ev cache.Event[*api.Unstructured]) {
		if ev.Type != cache.Deleted {
			return // creates are charged by admission
		}
		for _, req := range m.quotasOf(mctx, ev.Object.GetNamespace()) {
			queue.Add(req)
		}
	})
	if m.byGR == nil {
		m.byGR = map[api.GroupResource]*monitor{}
	}
	m.byGR[gr] = mon
	go func() { _ = mon.inf.Start(mctx) }()
	return mon, nil
}

// drop stops mon if it is still gr's monitor.
func (m *monitors) drop(gr api.GroupResource, mon *monitor) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byGR[gr] == mon {
		delete(m.byGR, gr)
		mon.cancel()
	}
}

// metadataOnly keeps what counting needs.
var metadataOnly = metawatch.Keep("name", "namespace", "uid", "resourceVersion")
