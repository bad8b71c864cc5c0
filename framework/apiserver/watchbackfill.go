package apiserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/storage"
)

// Backfill: a watch from a revision just below the cache's history is
// answered from storage's history for the gap, then from the cache.
//
// A cache's history starts at the revision of its last list
// (historyFrom). A client can hold an older revision that is still exact:
// typically it listed from storage (lists do not start caches) or wrote an
// object, and its watch is the one that starts the cache, whose list lands a
// few revisions later because other resources were written meanwhile. The
// events in between are still in etcd (until compaction), so the watcher is
// given those from a storage watch, then the cache's ring from historyFrom
// on — the same events, in the same order, as if the cache had started
// earlier. kube-apiserver answers such a watch "410 Gone", which its clients
// handle by relisting; some do not (the upstream conformance suite's CRD
// fixture watches from the revision of an object it has just created).

const (
	// maxBackfill bounds the events read from storage for one watcher; a
	// longer gap is answered "too old", as it always was.
	maxBackfill = 4096
	// backfillTimeout bounds how long reading the gap may take.
	backfillTimeout = 5 * time.Second
	// backfillProgressEvery is how often the store is asked for watch
	// progress while the gap's watch may have nothing more to send.
	backfillProgressEvery = 20 * time.Millisecond
)

// watchFrom is watch, with a fromRV below the cache's history answered from
// storage's events for the gap (see above) when the store still has them.
func (c *watchCache) watchFrom(ctx context.Context, fromRV int64, f objectFilter) (*cacheWatcher, []*cacheEvent, error) {
	w, initial, err := c.watch(fromRV, f)
	var tooOld errTooOld
	if fromRV <= 0 || !errors.As(err, &tooOld) {
		return w, initial, err
	}
	for range 3 {
		gap, herr := c.history(ctx, fromRV, tooOld.oldest)
		if herr != nil {
			c.log.V(1).Info("Watch below the cache's history not answered from storage", "prefix", c.prefix,
				"from", fromRV, "historyFrom", tooOld.oldest, "reason", herr.Error())
			return nil, nil, tooOld
		}
		// The ring holds every event after historyFrom unless it moved
		// (evictions, a relist) while the gap was read: then read again.
		w, _, err = c.watch(tooOld.oldest, f)
		if errors.As(err, &tooOld) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		w.backfill = gap
		w.startRV = fromRV
		return w, nil, nil
	}
	return nil, nil, tooOld
}

// history returns the changes under the cache's prefix with revisions in
// (from, to], read from a storage watch: its events up to to, ended by the
// first event after to or a progress notification at to or later. It fails
// when the store cannot report progress (it could not tell an empty gap from
// a slow one), the revisions were compacted, or the gap has more than
// maxBackfill events.
func (c *watchCache) history(ctx context.Context, from, to int64) ([]*cacheEvent, error) {
	pr, ok := c.store.(storage.ProgressRequester)
	if !ok {
		return nil, errors.New("the store reports no watch progress")
	}
	wctx, cancel := context.WithTimeout(storage.WithProgressEvents(ctx), backfillTimeout)
	defer cancel()
	events := c.store.Watch(wctx, c.prefix, from)
	ask := time.NewTicker(backfillProgressEvery)
	defer ask.Stop()
	var out []*cacheEvent
	for {
		select {
		case <-ask.C:
			if err := pr.RequestProgress(wctx); err != nil {
				return nil, fmt.Errorf("request watch progress: %w", err)
			}
			continue
		case <-wctx.Done():
			return nil, fmt.Errorf("read revisions (%d, %d] of %s: %w", from, to, c.prefix, wctx.Err())
		case ev, ok := <-events:
			if !ok {
				return nil, fmt.Errorf("read revisions (%d, %d] of %s: the watch ended", from, to, c.prefix)
			}
			if ev.Err != nil {
				return nil, fmt.Errorf("read revisions (%d, %d] of %s: %w", from, to, c.prefix, ev.Err)
			}
			if ev.KV.ModRevision > to || (ev.Type == storage.EventProgress && ev.KV.ModRevision >= to) {
				return out, nil
			}
			if ev.Type == storage.EventProgress {
				continue
			}
			ce, err := c.historyEvent(ev)
			if err != nil {
				return nil, err
			}
			if ce == nil {
				continue
			}
			if len(out) == maxBackfill {
				return nil, fmt.Errorf("more than %d events in revisions (%d, %d]", maxBackfill, from, to)
			}
			out = append(out, ce)
		}
	}
}

// historyEvent turns a storage event into a watch event on its own (the
// cache's objects are at another revision): the previous state is the
// event's previous value. nil skips an undecodable object, as apply does.
func (c *watchCache) historyEvent(ev storage.Event) (*cacheEvent, error) {
	rv := ev.KV.ModRevision
	var prev *cachedObject
	if ev.Prev != nil {
		p, err := c.decode(ev.Prev.Key, ev.Prev.Value, ev.Prev.ModRevision)
		if err != nil {
			c.log.Error(err, "Skipping undecodable object", "key", ev.Prev.Key)
			return nil, nil //nolint:nilerr // skipped, as the cache skips it
		}
		prev = p
	}
	switch ev.Type {
	case storage.EventPut:
		obj, err := c.decode(ev.KV.Key, ev.KV.Value, rv)
		if err != nil {
			c.log.Error(err, "Skipping undecodable object", "key", ev.KV.Key)
			return nil, nil //nolint:nilerr // skipped, as the cache skips it
		}
		if prev == nil {
			return &cacheEvent{typ: api.EventAdded, obj: obj, rv: rv}, nil
		}
		return &cacheEvent{typ: api.EventModified, obj: obj, prev: prev, rv: rv}, nil
	case storage.EventDelete:
		if prev == nil {
			return nil, fmt.Errorf("deletion of %s at revision %d without its last value", ev.KV.Key, rv)
		}
		return &cacheEvent{typ: api.EventDeleted, obj: prev.deletedAt(rv), prev: prev, rv: rv}, nil
	}
	return nil, nil
}
