package apiserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/storage"
)

// cachedObject is one object as the watch cache holds it. It is immutable once
// built except for the lazily rendered forms below: data is the stored JSON with
// resourceVersion spliced in, served unchanged to every request whose version is
// the stored one; other versions and watch frames are rendered at most once per
// version and shared by every list and watch.
type cachedObject struct {
	key        string
	namespace  string
	name       string
	apiVersion string // as stored
	rv         int64
	data       []byte
	labels     map[string]string // shared with other objects (fieldSets): read only
	fields     map[string]string // selectable fields but metadata.name (name above); as labels
	deleting   bool              // metadata.deletionTimestamp is set

	convMu sync.Mutex
	conv   map[string][]byte // renderings in other versions, by group/version
}

// deletedAt is o's last state as its deletion at revision rv carries it: the
// same object with rv as its resourceVersion.
func (o *cachedObject) deletedAt(rv int64) *cachedObject {
	return &cachedObject{
		key: o.key, namespace: o.namespace, name: o.name, apiVersion: o.apiVersion,
		rv: rv, data: withResourceVersion(stripRV(o.data), rv),
		labels: o.labels, fields: o.fields, deleting: o.deleting,
	}
}

// cacheEvent is one change of the watch cache. seq numbers the events of a cache
// consecutively; rv is the storage revision of the change.
type cacheEvent struct {
	seq  int64
	typ  string
	obj  *cachedObject // the new state; for DELETED the last state at the deletion revision
	prev *cachedObject // the previous state for MODIFIED and DELETED
	rv   int64

	// Recent events in the ring keep their frames in the stored version,
	// rendered once per event type and written by every watcher (fan-out):
	// kept is set when the event enters the ring and dropped once it is
	// keptFrames events old (watchers that far behind, or replaying, render
	// their own) or leaves the ring. Objects keep none: the frames of every
	// cached object held the cache twice.
	kept atomic.Pointer[eventFrames]
}

// eventFrames are the shared watch frames of one recent ring event.
type eventFrames struct {
	frameOnce [3]sync.Once
	frames    [3][]byte
	// The same in protobuf, for watchers that prefer it (watchproto.go),
	// with the error of an object that has no protobuf encoding.
	protoOnce   [3]sync.Once
	protoFrames [3][]byte
	protoErrs   [3]error
}

// keptFrames is how many of the most recent ring events keep their shared
// frames: watchers keeping up (the fan-out case) read those; the ring's
// older events (up to WatchCacheCapacity, 4,096 by default) would otherwise
// hold a second copy of up to that many objects' JSON, ≈8 MB of pods.
const keptFrames = 512

// newRingEvent returns an event that keeps shared frames while it is recent.
func newRingEvent(typ string, obj, prev *cachedObject, rv int64) *cacheEvent {
	ce := &cacheEvent{typ: typ, obj: obj, prev: prev, rv: rv}
	ce.kept.Store(&eventFrames{})
	return ce
}

// frameIndex is the index of an event type in cacheEvent's frames.
func frameIndex(typ string) int {
	switch typ {
	case api.EventModified:
		return 1
	case api.EventDeleted:
		return 2
	}
	return 0
}

// frame returns the watch frame of ev as type typ in v's version: for a ring
// event in the stored version, the frame rendered once and shared by every
// watcher; otherwise the frame rendered into *scratch, a buffer of the
// calling stream that it may reuse once the frame is written.
func (ev *cacheEvent) frame(typ string, v view, scratch *[]byte) ([]byte, error) {
	k := ev.kept.Load()
	if k == nil || !v.identity(ev.obj) {
		data, err := ev.obj.dataFor(v)
		if err != nil {
			return nil, err
		}
		b := appendFrame((*scratch)[:0], typ, data)
		if cap(b) <= maxKeptFrame {
			*scratch = b
		}
		return b, nil
	}
	i := frameIndex(typ)
	k.frameOnce[i].Do(func() { k.frames[i] = appendFrame(nil, typ, ev.obj.data) })
	return k.frames[i], nil
}

// maxKeptFrame bounds the scratch buffer a watch stream keeps between frames,
// so that one large object does not stay allocated for the watch's lifetime.
const maxKeptFrame = 64 << 10

// appendFrame appends `{"type":"TYP","object":DATA}\n` to b.
func appendFrame(b []byte, typ string, data []byte) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","object":`...)
	b = append(b, data...)
	return append(b, "}\n"...)
}

// dataFor returns the object's JSON as v sees it.
func (o *cachedObject) dataFor(v view) ([]byte, error) {
	if v.identity(o) {
		return o.data, nil
	}
	return o.converted(v)
}

// converted renders the object in v's version, once per version.
func (o *cachedObject) converted(v view) ([]byte, error) {
	o.convMu.Lock()
	defer o.convMu.Unlock()
	if data, ok := o.conv[v.key]; ok {
		return data, nil
	}
	data, err := v.render(o.data)
	if err != nil {
		// Not remembered: a conversion webhook that failed may answer next time.
		return nil, err
	}
	if o.conv == nil {
		o.conv = map[string][]byte{}
	}
	o.conv[v.key] = data
	return data, nil
}

// hasConverted reports whether the object is already rendered in version.
func (o *cachedObject) hasConverted(version string) bool {
	o.convMu.Lock()
	defer o.convMu.Unlock()
	_, ok := o.conv[version]
	return ok
}

// storeConverted remembers data as the object rendered in version (see
// view.renderAll), unless a rendering is already there.
func (o *cachedObject) storeConverted(version string, data []byte) {
	o.convMu.Lock()
	defer o.convMu.Unlock()
	if _, ok := o.conv[version]; ok {
		return
	}
	if o.conv == nil {
		o.conv = map[string][]byte{}
	}
	o.conv[version] = data
}

// objectFilter selects objects by namespace, labels and fields.
type objectFilter struct {
	namespace string
	// match sees the object and its selectable fields (o.fields or
	// fieldsOf's): metadata.name is o.name, not among them.
	match func(o *cachedObject, fields map[string]string) bool
	// fieldsOf, when set, gives the fields match sees instead of the
	// object's precomputed ones (selectable fields of a version other than
	// the one they were computed in).
	fieldsOf func(o *cachedObject) map[string]string
}

func (f objectFilter) matches(o *cachedObject) bool {
	if o == nil {
		return false
	}
	if f.namespace != "" && o.namespace != f.namespace {
		return false
	}
	if f.match == nil {
		return true
	}
	if f.fieldsOf != nil {
		return f.match(o, f.fieldsOf(o))
	}
	return f.match(o, o.fields)
}

// watchCache keeps the current objects of one resource and a ring of recent
// events, fed by a single storage watch.
//
// Delivery: the cache appends each event to the ring and publishes it by advancing
// head; after each batch of events it closes the wake channel (and installs a new
// one). Watchers never receive per-event sends: each keeps a cursor into the ring,
// waits on the wake channel, and consumes everything past its cursor in one batch.
// A watcher whose cursor falls out of the ring (it is more than the ring's capacity
// behind) is terminated; its client resumes or relists.
//
// The ring starts small and doubles up to its capacity as events come
// (resources with few changes keep a few slots, not WatchCacheCapacity of
// them); it evicts only once it has grown to the capacity.
//
// Concurrency: the ring, its slots, head and wake are read without the lock
// (slots hold events tagged with their seq, so a reader detects an overwritten
// slot; a grown ring is a new slice, the old one keeps what it held, and a
// reader loads the ring after head); they are written only with mu held. Lock
// order: mu only; never block while holding it.
type watchCache struct {
	store   storage.Interface
	prefix  string
	decode  func(key string, value []byte, rv int64) (*cachedObject, error)
	log     logr.Logger
	ringCap int

	ring atomic.Pointer[[]atomic.Pointer[cacheEvent]] // event seq s lives in ring[s%len(ring)]
	head atomic.Int64                                 // seq of the next event; [head-ringLen, head) are retained
	wake atomic.Pointer[chan struct{}]                // closed and replaced after events are published or on relist

	mu          sync.RWMutex
	objects     map[string]*cachedObject
	rv          int64
	historyFrom int64 // the ring holds every event with rv > historyFrom
	ringLen     int
	watchers    map[*cacheWatcher]struct{} // to terminate on relist and stop
	ready       bool
	readyCh     chan struct{}
	stopped     bool
	relists     atomic.Int64 // bumped by each relist, for generation
}

func newWatchCache(store storage.Interface, prefix string, capacity int, log logr.Logger,
	decode func(key string, value []byte, rv int64) (*cachedObject, error)) *watchCache {
	if capacity <= 0 {
		capacity = 4096
	}
	c := &watchCache{
		store: store, prefix: prefix, decode: decode, log: log, ringCap: capacity,
		objects: map[string]*cachedObject{}, watchers: map[*cacheWatcher]struct{}{},
		readyCh: make(chan struct{}),
	}
	c.resetRing()
	ch := make(chan struct{})
	c.wake.Store(&ch)
	return c
}

// minRing is the number of slots a ring starts with.
const minRing = 64

// resetRing installs an empty ring of minRing slots. Called with mu held (or
// before the cache is shared).
func (c *watchCache) resetRing() {
	r := make([]atomic.Pointer[cacheEvent], min(minRing, c.ringCap))
	c.ring.Store(&r)
	c.ringLen = 0
}

// slots returns the current ring.
func (c *watchCache) slots() []atomic.Pointer[cacheEvent] { return *c.ring.Load() }

// growRing installs a ring twice as large (at most ringCap) holding the
// retained events and returns it. Called with mu held, the ring full.
func (c *watchCache) growRing(old []atomic.Pointer[cacheEvent]) []atomic.Pointer[cacheEvent] {
	r := make([]atomic.Pointer[cacheEvent], min(2*len(old), c.ringCap))
	head := c.head.Load()
	for seq := head - int64(c.ringLen); seq < head; seq++ {
		r[seq%int64(len(r))].Store(old[seq%int64(len(old))].Load())
	}
	c.ring.Store(&r)
	return r
}

// wakeChan returns the channel closed when events after the current head are
// published (or the cache relists). Load it before reading head.
func (c *watchCache) wakeChan() <-chan struct{} { return *c.wake.Load() }

// broadcast wakes every waiter. Called with mu held.
func (c *watchCache) broadcast() {
	ch := make(chan struct{})
	old := c.wake.Swap(&ch)
	close(*old)
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
	// Readers of the old ring see its events gone (errFellBehind).
	old := c.slots()
	for i := range old {
		old[i].Store(nil)
	}
	c.resetRing()
	// Watchers could have missed events: end them so their clients resume.
	for w := range c.watchers {
		w.terminate()
		delete(c.watchers, w)
	}
	c.ready = true
	c.relists.Add(1)
	c.broadcast()
	c.mu.Unlock()
	if !wasReady {
		close(c.readyCh)
	}
	return res.Revision, nil
}

// maxBatch bounds the events applied before waiters are woken.
const maxBatch = 256

func (c *watchCache) follow(ctx context.Context, fromRev int64) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := c.store.Watch(storage.WithProgressEvents(wctx), c.prefix, fromRev)
	for {
		ev, ok := <-events
		// Apply what is already queued, then wake the watchers once.
		published := false
		for n := 0; ; n++ {
			if !ok {
				c.publish(published)
				return errors.New("watch closed")
			}
			if ev.Err != nil {
				c.publish(published)
				return ev.Err
			}
			published = c.apply(ev) || published
			more := false
			if n < maxBatch {
				select {
				case ev, ok = <-events:
					more = true
				default:
				}
			}
			if !more {
				break
			}
		}
		c.publish(published)
	}
}

// publish wakes the waiters when events were appended.
func (c *watchCache) publish(appended bool) {
	if !appended {
		return
	}
	c.mu.Lock()
	c.broadcast()
	c.mu.Unlock()
}

// apply turns one storage event into a cache event and appends it; it reports
// whether it appended. Waiters are woken by publish.
func (c *watchCache) apply(ev storage.Event) bool {
	if ev.Type == storage.EventProgress {
		// Every change up to the revision was applied: the cache is current
		// at it (consistent lists wait for this, consistentlist.go).
		c.mu.Lock()
		defer c.mu.Unlock()
		if ev.KV.ModRevision <= c.rv {
			return false
		}
		c.rv = ev.KV.ModRevision
		return true
	}
	var ce *cacheEvent
	switch ev.Type {
	case storage.EventPut:
		obj, err := c.decode(ev.KV.Key, ev.KV.Value, ev.KV.ModRevision)
		if err != nil {
			c.log.Error(err, "Skipping undecodable object", "key", ev.KV.Key)
			return false
		}
		c.mu.RLock()
		prev := c.objects[ev.KV.Key]
		c.mu.RUnlock()
		typ := api.EventAdded
		if prev != nil {
			typ = api.EventModified
		}
		ce = newRingEvent(typ, obj, prev, ev.KV.ModRevision)
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
			last = prev.deletedAt(ev.KV.ModRevision)
		}
		if last == nil {
			return false
		}
		ce = newRingEvent(api.EventDeleted, last, prev, ev.KV.ModRevision)
	default:
		return false
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if ce.rv <= c.rv {
		return false
	}
	if ce.typ == api.EventDeleted {
		delete(c.objects, ev.KV.Key)
	} else {
		c.objects[ev.KV.Key] = ce.obj
	}
	c.rv = ce.rv
	// Append to the ring, evicting the oldest event when full.
	seq := c.head.Load()
	ring := c.slots()
	if c.ringLen == len(ring) && len(ring) < c.ringCap {
		ring = c.growRing(ring)
	}
	slot := &ring[seq%int64(len(ring))]
	if c.ringLen == c.ringCap {
		evicted := slot.Load()
		c.historyFrom = evicted.rv
		evicted.kept.Store(nil)
	} else {
		c.ringLen++
	}
	ce.seq = seq
	slot.Store(ce)
	c.head.Store(seq + 1)
	// The event keptFrames back stops sharing its frames.
	if old := seq - keptFrames; old >= 0 {
		if o := ring[old%int64(len(ring))].Load(); o != nil && o.seq == old {
			o.kept.Store(nil)
		}
	}
	return true
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
		return nil // the common case, without ctx.Done
	default:
	}
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
		ch := c.wakeChan()
		if c.currentRV() >= rv {
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

// size is the number of cached objects, and whether the cache is ready.
func (c *watchCache) size() (int, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.objects), c.ready
}

// get returns the cached object at key, or nil.
func (c *watchCache) get(key string) *cachedObject {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.objects[key]
}

// currentRV returns the cache's revision.
// generation changes whenever the cached objects change (an event applied,
// a relist); it never goes back.
func (c *watchCache) generation() int64 { return c.head.Load() + c.relists.Load() }

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

// errFellBehind ends a watcher whose cursor fell out of the ring.
var errFellBehind = errors.New("watcher fell behind the watch cache")

// watch registers a watcher. With fromRV == 0 the current matching objects are
// returned as initial ADDED events and the watcher consumes what follows;
// otherwise the watcher's cursor is placed on the first retained event after
// fromRV, so it replays them (errTooOld when history does not reach back that far).
func (c *watchCache) watch(fromRV int64, f objectFilter) (*cacheWatcher, []*cacheEvent, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil, nil, errors.New("watch cache stopped")
	}
	var initial []*cacheEvent
	startRV := fromRV
	head := c.head.Load()
	cursor := head
	if fromRV == 0 {
		objs := make([]*cachedObject, 0, len(c.objects))
		for _, o := range c.objects {
			if f.matches(o) {
				objs = append(objs, o)
			}
		}
		slices.SortFunc(objs, func(a, b *cachedObject) int { return strings.Compare(a.key, b.key) })
		initial = make([]*cacheEvent, len(objs))
		for i, o := range objs {
			initial[i] = &cacheEvent{typ: api.EventAdded, obj: o, rv: o.rv}
		}
		startRV = c.rv
	} else {
		if fromRV < c.historyFrom {
			return nil, nil, errTooOld{fromRV, c.historyFrom}
		}
		// The first retained event with rv > fromRV (rvs increase along the ring).
		tail := head - int64(c.ringLen)
		ring := c.slots()
		cursor = tail + int64(sort.Search(c.ringLen, func(i int) bool {
			return ring[(tail+int64(i))%int64(len(ring))].Load().rv > fromRV
		}))
	}
	w := &cacheWatcher{
		c: c, filter: f, startRV: startRV, lastRV: startRV,
		cursor: cursor, done: make(chan struct{}),
	}
	if fromRV != 0 && cursor == head {
		// Nothing to replay: the watcher has seen everything up to the cache's revision.
		w.lastRV = max(fromRV, c.rv)
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

// cacheWatcher is one client watch: a filter and a cursor into the cache's ring.
// consume and the cursor belong to the goroutine serving the watch; terminate may
// be called from anywhere.
type cacheWatcher struct {
	c       *watchCache
	filter  objectFilter
	startRV int64 // events at or before it are not delivered
	cursor  int64 // seq of the next event to consume
	lastRV  int64 // the watcher has seen every event up to this revision
	done    chan struct{}
	// backfill are events from storage older than the ring, consumed before
	// it (watchFrom).
	backfill []*cacheEvent

	closeOnce sync.Once
}

func (w *cacheWatcher) terminate() { w.closeOnce.Do(func() { close(w.done) }) }

// consume reads every event published past the cursor, in order, and calls emit
// for each one the watcher should see, with the type it should see it as
// (selector transitions become ADDED or DELETED). It stops at emit's first error.
// When the cursor fell out of the ring it terminates the watcher and returns
// errFellBehind. n counts the emitted events.
func (w *cacheWatcher) consume(emit func(ev *cacheEvent, typ string) error) (n int, err error) {
	for len(w.backfill) > 0 {
		ev := w.backfill[0]
		w.backfill[0] = nil
		w.backfill = w.backfill[1:]
		if ev.rv <= w.startRV {
			continue
		}
		w.lastRV = max(w.lastRV, ev.rv)
		if typ := resolveType(w.filter, ev); typ != "" {
			if err := emit(ev, typ); err != nil {
				return n, err
			}
			n++
		}
	}
	c := w.c
	head := c.head.Load()
	if head-w.cursor > int64(c.ringCap) {
		w.terminate()
		return n, errFellBehind
	}
	ring := c.slots() // after head: it holds every event before head
	for w.cursor < head {
		ev := ring[w.cursor%int64(len(ring))].Load()
		if ev == nil || ev.seq != w.cursor {
			w.terminate()
			return n, errFellBehind
		}
		w.cursor++
		if ev.rv <= w.startRV {
			continue
		}
		w.lastRV = ev.rv
		typ := resolveType(w.filter, ev)
		if typ == "" {
			continue
		}
		if err := emit(ev, typ); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// resolveType returns the event type a watcher with filter f should see for ev
// (selector transitions become ADDED or DELETED), or "" to skip.
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
