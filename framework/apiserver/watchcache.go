package apiserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/storage"
)

// cachedObject is one object as the watch cache holds it. It is immutable once
// built: data is the JSON served to clients (resourceVersion included), computed
// once and shared by every list and watch.
type cachedObject struct {
	key       string
	namespace string
	name      string
	rv        int64
	data      []byte
	labels    map[string]string
	fields    map[string]string
	deleting  bool // metadata.deletionTimestamp is set
}

// cacheEvent is one change, with the frames for each watch event type rendered
// lazily and at most once.
type cacheEvent struct {
	typ  string
	obj  *cachedObject // the new state; for DELETED the last state at the deletion revision
	prev *cachedObject // the previous state for MODIFIED and DELETED
	rv   int64

	once   [3]sync.Once
	frames [3][]byte
}

var eventTypes = [3]string{api.EventAdded, api.EventModified, api.EventDeleted}

func eventIndex(typ string) int {
	switch typ {
	case api.EventAdded:
		return 0
	case api.EventModified:
		return 1
	}
	return 2
}

// frame returns `{"type":T,"object":...}\n` for the given type, rendered once.
func (e *cacheEvent) frame(typ string) []byte {
	i := eventIndex(typ)
	e.once[i].Do(func() {
		e.frames[i] = renderFrame(eventTypes[i], e.obj.data)
	})
	return e.frames[i]
}

func renderFrame(typ string, data []byte) []byte {
	b := make([]byte, 0, len(data)+32)
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","object":`...)
	b = append(b, data...)
	b = append(b, "}\n"...)
	return b
}

// objectFilter selects objects by namespace, labels and fields.
type objectFilter struct {
	namespace string
	match     func(labels, fields map[string]string) bool
}

func (f objectFilter) matches(o *cachedObject) bool {
	if o == nil {
		return false
	}
	if f.namespace != "" && o.namespace != f.namespace {
		return false
	}
	return f.match == nil || f.match(o.labels, o.fields)
}

// watchCache keeps the current objects of one resource and a ring of recent events,
// fed by a single storage watch. Lock order: mu only; never call out while holding it
// except non-blocking channel sends.
type watchCache struct {
	store   storage.Interface
	prefix  string
	decode  func(key string, value []byte, rv int64) (*cachedObject, error)
	log     logr.Logger
	ringCap int

	mu          sync.RWMutex
	objects     map[string]*cachedObject
	rv          int64
	historyFrom int64 // the ring holds every event with rv > historyFrom
	ring        []*cacheEvent
	ringStart   int
	ringLen     int
	watchers    map[*cacheWatcher]struct{}
	ready       bool
	readyCh     chan struct{}
	rvCh        chan struct{} // closed and replaced whenever rv advances
	stopped     bool
}

func newWatchCache(store storage.Interface, prefix string, capacity int, log logr.Logger,
	decode func(key string, value []byte, rv int64) (*cachedObject, error)) *watchCache {
	if capacity <= 0 {
		capacity = 4096
	}
	return &watchCache{
		store: store, prefix: prefix, decode: decode, log: log, ringCap: capacity,
		objects: map[string]*cachedObject{}, watchers: map[*cacheWatcher]struct{}{},
		ring: make([]*cacheEvent, capacity), readyCh: make(chan struct{}), rvCh: make(chan struct{}),
	}
}

// run lists, then watches, until ctx ends; it relists after a broken watch.
func (c *watchCache) run(ctx context.Context) {
	defer c.stop()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		rev, err := c.relist(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			c.log.Error(err, "Watch cache list failed", "prefix", c.prefix)
			time.Sleep(backoff)
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		err = c.follow(ctx, rev)
		if ctx.Err() != nil {
			return
		}
		c.log.V(1).Info("Watch cache relisting", "prefix", c.prefix, "reason", err)
	}
}

func (c *watchCache) relist(ctx context.Context) (int64, error) {
	res, err := c.store.List(ctx, c.prefix, storage.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", c.prefix, err)
	}
	objs := make(map[string]*cachedObject, len(res.Items))
	for _, kv := range res.Items {
		o, err := c.decode(kv.Key, kv.Value, kv.ModRevision)
		if err != nil {
			c.log.Error(err, "Skipping undecodable object", "key", kv.Key)
			continue
		}
		objs[kv.Key] = o
	}
	c.mu.Lock()
	wasReady := c.ready
	c.objects = objs
	c.rv = res.Revision
	c.historyFrom = res.Revision
	c.ringStart, c.ringLen = 0, 0
	clear(c.ring)
	// Watchers could have missed events: end them so their clients resume.
	for w := range c.watchers {
		w.terminate()
		delete(c.watchers, w)
	}
	c.ready = true
	close(c.rvCh)
	c.rvCh = make(chan struct{})
	c.mu.Unlock()
	if !wasReady {
		close(c.readyCh)
	}
	return res.Revision, nil
}

func (c *watchCache) follow(ctx context.Context, fromRev int64) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for ev := range c.store.Watch(wctx, c.prefix, fromRev) {
		if ev.Err != nil {
			return ev.Err
		}
		c.apply(ev)
	}
	return errors.New("watch closed")
}

func (c *watchCache) apply(ev storage.Event) {
	var ce *cacheEvent
	switch ev.Type {
	case storage.EventPut:
		obj, err := c.decode(ev.KV.Key, ev.KV.Value, ev.KV.ModRevision)
		if err != nil {
			c.log.Error(err, "Skipping undecodable object", "key", ev.KV.Key)
			return
		}
		c.mu.RLock()
		prev := c.objects[ev.KV.Key]
		c.mu.RUnlock()
		ce = &cacheEvent{typ: api.EventAdded, obj: obj, prev: prev, rv: ev.KV.ModRevision}
		if prev != nil {
			ce.typ = api.EventModified
		}
	case storage.EventDelete:
		c.mu.RLock()
		prev := c.objects[ev.KV.Key]
		c.mu.RUnlock()
		var last *cachedObject
		if ev.Prev != nil {
			o, err := c.decode(ev.KV.Key, ev.Prev.Value, ev.KV.ModRevision)
			if err == nil {
				last = o
			}
		}
		if last == nil && prev != nil {
			o := *prev
			o.rv = ev.KV.ModRevision
			o.data = withResourceVersion(stripRV(prev.data), ev.KV.ModRevision)
			last = &o
		}
		if last == nil {
			return
		}
		ce = &cacheEvent{typ: api.EventDeleted, obj: last, prev: prev, rv: ev.KV.ModRevision}
	default:
		return
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if ce.rv <= c.rv {
		return
	}
	if ce.typ == api.EventDeleted {
		delete(c.objects, ev.KV.Key)
	} else {
		c.objects[ev.KV.Key] = ce.obj
	}
	c.rv = ce.rv
	// Append to the ring, evicting the oldest event when full.
	if c.ringLen == c.ringCap {
		oldest := c.ring[c.ringStart]
		c.historyFrom = oldest.rv
		c.ring[c.ringStart] = nil
		c.ringStart = (c.ringStart + 1) % c.ringCap
		c.ringLen--
	}
	c.ring[(c.ringStart+c.ringLen)%c.ringCap] = ce
	c.ringLen++
	for w := range c.watchers {
		if !w.send(ce) {
			delete(c.watchers, w)
		}
	}
	close(c.rvCh)
	c.rvCh = make(chan struct{})
}

// stripRV undoes withResourceVersion for data built by it.
func stripRV(data []byte) []byte {
	s := string(data)
	const p = `{"metadata":{"resourceVersion":"`
	if !strings.HasPrefix(s, p) {
		return data
	}
	end := strings.IndexByte(s[len(p):], '"')
	if end < 0 {
		return data
	}
	rest := s[len(p)+end+1:]
	rest = strings.TrimPrefix(rest, ",")
	return []byte(`{"metadata":{` + rest)
}

func (c *watchCache) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	for w := range c.watchers {
		w.terminate()
		delete(c.watchers, w)
	}
}

// waitReady blocks until the first list completed or ctx ends.
func (c *watchCache) waitReady(ctx context.Context) error {
	select {
	case <-c.readyCh:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitForRV blocks until the cache has seen revision rv, up to timeout.
func (c *watchCache) waitForRV(ctx context.Context, rv int64, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.RLock()
		cur, ch := c.rv, c.rvCh
		c.mu.RUnlock()
		if cur >= rv {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// get returns the cached object at key, or nil.
func (c *watchCache) get(key string) *cachedObject {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.objects[key]
}

// currentRV returns the cache's revision.
func (c *watchCache) currentRV() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rv
}

// list returns the matching objects sorted by key and the cache revision.
func (c *watchCache) list(f objectFilter) ([]*cachedObject, int64) {
	c.mu.RLock()
	out := make([]*cachedObject, 0, len(c.objects))
	for _, o := range c.objects {
		if f.matches(o) {
			out = append(out, o)
		}
	}
	rv := c.rv
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b *cachedObject) int { return strings.Compare(a.key, b.key) })
	return out, rv
}

// errTooOld reports a watch start revision older than the cache's history.
type errTooOld struct{ requested, oldest int64 }

func (e errTooOld) Error() string {
	return "too old resource version: " + strconv.FormatInt(e.requested, 10) + " (" + strconv.FormatInt(e.oldest, 10) + ")"
}

// watch registers a watcher. With fromRV == 0 the current matching objects are
// returned as initial ADDED events; otherwise the retained events after fromRV are
// replayed (errTooOld when history does not reach back that far).
func (c *watchCache) watch(fromRV int64, f objectFilter, bufSize int, bookmarks bool) (*cacheWatcher, []*cacheEvent, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, nil, errors.New("watch cache stopped")
	}
	var initial []*cacheEvent
	startRV := fromRV
	if fromRV == 0 {
		objs := make([]*cachedObject, 0, len(c.objects))
		for _, o := range c.objects {
			if f.matches(o) {
				objs = append(objs, o)
			}
		}
		slices.SortFunc(objs, func(a, b *cachedObject) int { return strings.Compare(a.key, b.key) })
		for _, o := range objs {
			initial = append(initial, &cacheEvent{typ: api.EventAdded, obj: o, rv: o.rv})
		}
		startRV = c.rv
	} else {
		if fromRV < c.historyFrom {
			return nil, nil, errTooOld{fromRV, c.historyFrom}
		}
		for i := 0; i < c.ringLen; i++ {
			ev := c.ring[(c.ringStart+i)%c.ringCap]
			if ev.rv > fromRV {
				initial = append(initial, ev)
			}
		}
	}
	w := &cacheWatcher{
		filter: f, startRV: startRV, bookmarks: bookmarks,
		ch: make(chan *cacheEvent, bufSize), done: make(chan struct{}),
	}
	c.watchers[w] = struct{}{}
	return w, initial, nil
}

// forget unregisters a watcher.
func (c *watchCache) forget(w *cacheWatcher) {
	c.mu.Lock()
	delete(c.watchers, w)
	c.mu.Unlock()
	w.terminate()
}

// cacheWatcher receives events for one client watch.
type cacheWatcher struct {
	filter    objectFilter
	startRV   int64
	bookmarks bool
	ch        chan *cacheEvent
	done      chan struct{}
	closeOnce sync.Once
}

// send queues ev if it concerns the watcher; a full buffer terminates the watcher
// (its client relists or resumes) instead of slowing the cache. Called with the
// cache lock held.
func (w *cacheWatcher) send(ev *cacheEvent) bool {
	if ev.rv <= w.startRV {
		return true
	}
	if !w.filter.matches(ev.obj) && !w.filter.matches(ev.prev) {
		return true
	}
	select {
	case w.ch <- ev:
		return true
	default:
		w.terminate()
		return false
	}
}

func (w *cacheWatcher) terminate() { w.closeOnce.Do(func() { close(w.done) }) }

// resolve returns the event type this watcher should see for ev given its filter
// (selector transitions become ADDED or DELETED), or "" to skip.
func (w *cacheWatcher) resolve(ev *cacheEvent) string {
	return resolveType(w.filter, ev)
}

func resolveType(f objectFilter, ev *cacheEvent) string {
	switch ev.typ {
	case api.EventAdded:
		if f.matches(ev.obj) {
			return api.EventAdded
		}
	case api.EventModified:
		cur, old := f.matches(ev.obj), f.matches(ev.prev)
		switch {
		case cur && old:
			return api.EventModified
		case cur:
			return api.EventAdded
		case old:
			return api.EventDeleted
		}
	case api.EventDeleted:
		if f.matches(ev.prev) || (ev.prev == nil && f.matches(ev.obj)) {
			return api.EventDeleted
		}
	}
	return ""
}
