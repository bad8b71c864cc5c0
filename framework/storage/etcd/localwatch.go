package etcd

import (
	"context"
	"fmt"
	"sync"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/storage/mvcc"

	"github.com/converge-dev/converge/framework/storage"
)

// localWatches serves NewLocal's watches straight from the embedded server's
// multi-version store (etcd's mvcc.WatchableKV), one watch stream per watch,
// while the server is its cluster's only member (converge up's default).
//
// A watch through the in-process client passes each event through etcd's
// watch service (its send loop), the in-process gRPC adapter's stream and the
// client's watch goroutines before it reaches the watch's own goroutine: four
// goroutine hand-offs per response, the service's sole 128-slot channel
// filling when the chain is not scheduled in time (the server then re-reads
// the missed revisions from its backend). Here the watch's goroutine reads the
// store's channel itself and does what the watch service would: it reads the
// previous value of updates and deletes at the revision before theirs, turns
// an empty response into a progress notification and a compaction into
// storage.ErrCompacted.
//
// Several members keep the watch service's path, where etcd cancels watches
// that require a leader once the member has lost it; a lone member is always
// its own leader.
type localWatches struct {
	kv mvcc.WatchableKV
	// single reports whether the server is its cluster's only member.
	single func() bool
	// closed ends every watch (Embedded.Close, before the server stops: a
	// read of a previous value must not reach a closed backend).
	closed chan struct{}
	wg     sync.WaitGroup

	mu      sync.Mutex
	stopped bool
	streams map[mvcc.WatchStream]struct{}
}

func newLocalWatches(kv mvcc.WatchableKV, single func() bool) *localWatches {
	return &localWatches{kv: kv, single: single, closed: make(chan struct{}), streams: map[mvcc.WatchStream]struct{}{}}
}

// watch starts a watch of the keys under prefix after revision from (> 0).
func (l *localWatches) watch(ctx context.Context, prefix string, from int64) <-chan storage.Event {
	out := make(chan storage.Event, 100)
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		go sendFinal(ctx, out, fmt.Errorf("watch %q from revision %d: %w", prefix, from, errWatchClosed))
		return out
	}
	ws := l.kv.NewWatchStream()
	key := []byte(prefix)
	// The watch ID 0 is clientv3.AutoWatchID: etcd picks it.
	if _, err := ws.Watch(0, key, []byte(clientv3.GetPrefixRangeEnd(prefix)), from+1); err != nil {
		l.mu.Unlock()
		ws.Close()
		go sendFinal(ctx, out, fmt.Errorf("watch %q from revision %d: %w", prefix, from, err))
		return out
	}
	l.streams[ws] = struct{}{}
	l.wg.Add(1)
	l.mu.Unlock()
	go l.run(ctx, ws, out, prefix, from, storage.ProgressEventsWanted(ctx))
	return out
}

// run forwards ws's responses to out until ctx ends, the watches are closed
// or the watch fails, then closes out and releases ws.
func (l *localWatches) run(ctx context.Context, ws mvcc.WatchStream, out chan<- storage.Event, prefix string, from int64, progress bool) {
	defer l.wg.Done()
	defer close(out)
	defer l.release(ws)
	fail := func(err error) {
		send(ctx, out, storage.Event{Err: fmt.Errorf("watch %q from revision %d: %w", prefix, from, err)})
	}
	for {
		var resp mvcc.WatchResponse
		select {
		case <-ctx.Done():
			return
		case <-l.closed:
			fail(errWatchClosed)
			return
		case resp = <-ws.Chan():
		}
		mvcc.ReportEventReceived(len(resp.Events))
		if resp.CompactRevision != 0 {
			fail(fmt.Errorf("%w (compacted at revision %d)", storage.ErrCompacted, resp.CompactRevision))
			return
		}
		if len(resp.Events) == 0 { // only progress notifications carry no event
			if progress && !send(ctx, out, storage.Event{Type: storage.EventProgress, KV: storage.KeyValue{ModRevision: resp.Revision}}) {
				return
			}
			continue
		}
		for i := range resp.Events {
			ev := &resp.Events[i]
			e := storage.Event{Type: storage.EventPut, KV: toKeyValue(ev.Kv)}
			if ev.Type == mvccpb.DELETE {
				e.Type = storage.EventDelete
				e.Prev = l.previous(ctx, ev.Kv)
			} else if ev.Kv.CreateRevision != ev.Kv.ModRevision {
				e.Prev = l.previous(ctx, ev.Kv)
			}
			if !send(ctx, out, e) {
				return
			}
		}
	}
}

// previous is kv's key as it was at the revision before kv's, nil when that
// revision is compacted (as etcd's watch service leaves PrevKv out then).
func (l *localWatches) previous(ctx context.Context, kv *mvccpb.KeyValue) *storage.KeyValue {
	r, err := l.kv.Range(ctx, kv.Key, nil, mvcc.RangeOptions{Rev: kv.ModRevision - 1})
	if err != nil {
		return nil
	}
	if len(r.KVs) == 0 {
		return nil
	}
	prev := toKeyValue(&r.KVs[0])
	return &prev
}

// release closes ws, first taking it out of the progress requests, and
// accounts for the responses still buffered in it (etcd's pending-events
// gauge counts every response sent until it is received).
func (l *localWatches) release(ws mvcc.WatchStream) {
	l.mu.Lock()
	delete(l.streams, ws)
	l.mu.Unlock()
	ws.Close()
	for resp := range ws.Chan() {
		mvcc.ReportEventReceived(len(resp.Events))
	}
}

// requestProgress asks every watch for a progress notification: a watch that
// has sent every change up to the store's revision gets one with it; one
// still catching up gets none (as from etcd's watch service), and the caller
// sees its progress through its events.
func (l *localWatches) requestProgress() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ws := range l.streams {
		ws.RequestProgressAll()
	}
}

// close ends every watch and waits for their goroutines, so that none reads
// from the server after this returns; later watches fail at once.
func (l *localWatches) close() {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return
	}
	l.stopped = true
	close(l.closed)
	l.mu.Unlock()
	l.wg.Wait()
}
