package garbagecollector

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/controllers/internal/metawatch"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/reconcile"
)

// crdResource is the resource whose changes trigger a discovery re-read.
const crdResource = "customresourcedefinitions.apiextensions.k8s.io"

// syncTimeout bounds the wait for the first discovery round's informers.
const syncTimeout = 30 * time.Second

// monitor is one resource's running informer.
type monitor struct {
	inf    *cache.Informer[*metawatch.Meta]
	cancel context.CancelFunc
	done   chan struct{}
}

// graphBuilder is the controller's Source: it discovers resources, runs one
// informer per resource, keeps the graph and enqueues the uids whose state may
// call for action.
type graphBuilder struct {
	graph    *graph
	interval time.Duration
	log      logr.Logger
	c        *client.Client

	poke   chan struct{}
	synced chan struct{} // closed once the first discovery round has synced

	mu       sync.Mutex
	monitors map[string]*monitor // guarded by mu
	queue    handler.Queue       // set by Start; guarded by mu
}

func newGraphBuilder(c *client.Client, g *graph, interval time.Duration, log logr.Logger) *graphBuilder {
	return &graphBuilder{
		graph:    g,
		interval: interval,
		log:      log,
		c:        c,
		poke:     make(chan struct{}, 1),
		synced:   make(chan struct{}),
		monitors: map[string]*monitor{},
	}
}

// discover lists the resources to monitor.
func (b *graphBuilder) discover(ctx context.Context) ([]resource, error) {
	return discoverResources(ctx, b.c.REST(), "list", "watch", "delete")
}

// newInformer builds the informer of one resource: the metadata the graph
// needs only (metawatch.Meta).
func (b *graphBuilder) newInformer(res resource) *cache.Informer[*metawatch.Meta] {
	return cache.NewInformer[*metawatch.Meta](metawatch.NewMetaListWatch(b.c, res.GVK()),
		cache.InformerOptions[*metawatch.Meta]{})
}

// Start implements controller.Source: it runs discovery and the monitors in
// the background until ctx ends.
func (b *graphBuilder) Start(ctx context.Context, q handler.Queue) error {
	b.mu.Lock()
	b.queue = q
	b.mu.Unlock()
	go b.run(ctx)
	return nil
}

// WaitForSync implements controller.SyncingSource: the first discovery round's
// informers have all listed.
func (b *graphBuilder) WaitForSync(ctx context.Context) bool {
	select {
	case <-b.synced:
		return true
	case <-ctx.Done():
		return false
	}
}

// allSynced reports whether every running monitor has listed, i.e. whether
// the graph can be trusted to know every dependent.
func (b *graphBuilder) allSynced() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.monitors {
		if !m.inf.HasSynced() {
			return false
		}
	}
	return true
}

func (b *graphBuilder) run(ctx context.Context) {
	first := true
	t := time.NewTicker(b.interval)
	defer t.Stop()
	defer b.stopAll()
	for {
		if err := b.sync(ctx); err != nil {
			b.log.Error(err, "Garbage collector discovery failed")
		}
		if first {
			b.mu.Lock()
			infs := make([]*cache.Informer[*metawatch.Meta], 0, len(b.monitors))
			for _, m := range b.monitors {
				infs = append(infs, m.inf)
			}
			b.mu.Unlock()
			// A resource that cannot be listed must not stall the collector
			// forever; decisions that need a complete graph check allSynced.
			sctx, cancel := context.WithTimeout(ctx, syncTimeout)
			for _, inf := range infs {
				inf.WaitForCacheSync(sctx)
			}
			cancel()
			if len(infs) > 0 && ctx.Err() == nil {
				close(b.synced)
				first = false
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-b.poke:
		}
	}
}

// sync starts monitors for new resources and, when discovery fully succeeded,
// stops those of resources no longer served.
func (b *graphBuilder) sync(ctx context.Context) error {
	resources, err := b.discover(ctx)
	if len(resources) == 0 {
		return err
	}
	want := map[string]resource{}
	for _, r := range resources {
		want[r.String()] = r
	}
	b.mu.Lock()
	var stale []string
	for key, m := range b.monitors {
		if _, ok := want[key]; !ok && err == nil {
			m.cancel()
			stale = append(stale, key)
		}
	}
	for key, r := range want {
		if _, ok := b.monitors[key]; ok {
			continue
		}
		inf := b.newInformer(r)
		inf.AddHandler(func(ev cache.Event[*metawatch.Meta]) { b.handle(key, r, ev) })
		mctx, cancel := context.WithCancel(ctx)
		m := &monitor{inf: inf, cancel: cancel, done: make(chan struct{})}
		b.monitors[key] = m
		go func() {
			defer close(m.done)
			_ = inf.Start(mctx) // returns nil when mctx ends
		}()
		b.log.V(1).Info("Monitoring resource", "resource", key)
	}
	var stopped []*monitor
	for _, key := range stale {
		stopped = append(stopped, b.monitors[key])
		delete(b.monitors, key)
	}
	b.mu.Unlock()
	for i, m := range stopped {
		<-m.done
		// The resource is gone: so are its objects.
		for _, uid := range b.graph.uidsOf(stale[i]) {
			if n := b.graph.remove(uid); n != nil {
				b.enqueueRelated(n)
			}
		}
		b.log.V(1).Info("Stopped monitoring resource", "resource", stale[i])
	}
	return err
}

func (b *graphBuilder) stopAll() {
	b.mu.Lock()
	ms := make([]*monitor, 0, len(b.monitors))
	for _, m := range b.monitors {
		m.cancel()
		ms = append(ms, m)
	}
	b.mu.Unlock()
	for _, m := range ms {
		<-m.done
	}
}

func (b *graphBuilder) enqueue(uid string) {
	b.mu.Lock()
	q := b.queue
	b.mu.Unlock()
	if q != nil && uid != "" {
		q.Add(reconcile.Request{ObjectKey: client.ObjectKey{Name: uid}})
	}
}

// enqueueRelated enqueues what a vanished node affects: its dependents (their
// owner may now be gone) and its owners (one may be waiting for it).
func (b *graphBuilder) enqueueRelated(n *node) {
	for _, d := range b.graph.dependentsOf(n.UID) {
		b.enqueue(d.UID)
	}
	for _, r := range n.Owners {
		b.enqueue(r.UID)
	}
}

// handle applies one informer event to the graph. It only enqueues uids; the
// reconciler decides from the current state, whatever the event was.
func (b *graphBuilder) handle(key string, r resource, ev cache.Event[*metawatch.Meta]) {
	if r.GVR.Resource+"."+r.GVR.Group == crdResource {
		select {
		case b.poke <- struct{}{}:
		default:
		}
	}
	obj := ev.Object
	if ev.Type == cache.Deleted {
		n := b.graph.remove(obj.GetUID())
		if n == nil {
			n = nodeFor(obj, key, r.GVK())
		}
		b.enqueueRelated(n)
		return
	}
	n := nodeFor(obj, key, r.GVK())
	old := b.graph.upsert(n)
	if old != nil && reflect.DeepEqual(old.Owners, n.Owners) && old.Deleting == n.Deleting &&
		slices.Equal(old.Finalizers, n.Finalizers) {
		return
	}
	if len(n.Owners) > 0 || n.waitingForDependents() || n.orphaning() {
		b.enqueue(n.UID)
	}
	if n.waitingForDependents() && (old == nil || !old.waitingForDependents()) {
		for _, d := range b.graph.dependentsOf(n.UID) {
			b.enqueue(d.UID)
		}
	}
	if n.Deleting && (old == nil || !old.Deleting) {
		// An owner waiting in the foreground may stop being blocked soon;
		// reconciling it is cheap when nothing changed.
		for _, o := range n.Owners {
			b.enqueue(o.UID)
		}
	}
	if old != nil {
		for _, o := range old.Owners {
			if cur, ok := n.ownerRef(o.UID); !ok || !reflect.DeepEqual(cur, o) {
				b.enqueue(o.UID)
			}
		}
	}
}
