package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/converge-dev/converge/framework/storage"
)

// errWatchClosed reports that etcd closed a watch without saying why (the client
// was closed, for instance).
var errWatchClosed = errors.New("etcd: watch channel closed")

// Watch streams the changes under prefix with a revision greater than
// fromRevision until ctx ends, then closes the channel. With fromRevision 0 the
// watch starts at the store revision current when Watch is called, so every
// write that completes after Watch returns is seen. A failed watch (compacted
// start revision, lost leader, closed client) sends one last Event with Err set
// and closes the channel; the caller must cancel ctx in any case to release it.
func (s *Store) Watch(ctx context.Context, prefix string, fromRevision int64) <-chan storage.Event {
	out := make(chan storage.Event, 100)
	if fromRevision <= 0 {
		rev, err := s.CurrentRevision(ctx)
		if err != nil {
			go sendFinal(ctx, out, fmt.Errorf("watch %q: %w", prefix, err))
			return out
		}
		fromRevision = rev
	}
	if s.watches != nil && s.watches.single() {
		return s.watches.watch(ctx, prefix, fromRevision)
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	wch := s.client.Watch(wctx, prefix,
		clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithRev(fromRevision+1))
	progress := storage.ProgressEventsWanted(ctx)
	go func() {
		defer cancel()
		run(ctx, wch, out, prefix, fromRevision, progress)
	}()
	return out
}

// RequestProgress asks etcd to send every watch of this store a progress
// notification with the current revision (storage.ProgressRequester). The
// watches share the gRPC stream of their metadata (WithRequireLeader), so
// the request goes on that stream; NewLocal's watches on a lone member are
// asked one by one.
func (s *Store) RequestProgress(ctx context.Context) error {
	if s.watches != nil {
		s.watches.requestProgress()
		if s.watches.single() {
			return nil
		}
	}
	rctx, cancel := context.WithTimeout(clientv3.WithRequireLeader(context.WithoutCancel(ctx)), 5*time.Second)
	defer cancel()
	if err := s.client.RequestProgress(rctx); err != nil {
		return fmt.Errorf("request watch progress: %w", mapError(err))
	}
	return nil
}

// run forwards wch to out until ctx ends or the watch fails, then closes out.
func run(ctx context.Context, wch clientv3.WatchChan, out chan<- storage.Event, prefix string, from int64, progress bool) {
	defer close(out)
	for {
		var resp clientv3.WatchResponse
		var ok bool
		select {
		case <-ctx.Done():
			return
		case resp, ok = <-wch:
		}
		if !ok {
			if ctx.Err() == nil {
				send(ctx, out, storage.Event{Err: fmt.Errorf("watch %q from revision %d: %w", prefix, from, errWatchClosed)})
			}
			return
		}
		if err := watchError(resp); err != nil {
			send(ctx, out, storage.Event{Err: fmt.Errorf("watch %q from revision %d: %w", prefix, from, err)})
			return
		}
		if progress && resp.IsProgressNotify() {
			if !send(ctx, out, storage.Event{Type: storage.EventProgress, KV: storage.KeyValue{ModRevision: resp.Header.Revision}}) {
				return
			}
			continue
		}
		for _, ev := range resp.Events {
			e := storage.Event{KV: toKeyValue(ev.Kv)}
			switch ev.Type {
			case clientv3.EventTypeDelete:
				e.Type = storage.EventDelete
				if ev.PrevKv != nil {
					prev := toKeyValue(ev.PrevKv)
					e.Prev = &prev
				}
			default:
				e.Type = storage.EventPut
				if !ev.IsCreate() && ev.PrevKv != nil {
					prev := toKeyValue(ev.PrevKv)
					e.Prev = &prev
				}
			}
			if !send(ctx, out, e) {
				return
			}
		}
	}
}

// watchError maps a failed watch response to an error, nil for a healthy one.
func watchError(resp clientv3.WatchResponse) error {
	if resp.CompactRevision != 0 {
		return fmt.Errorf("%w (compacted at revision %d)", storage.ErrCompacted, resp.CompactRevision)
	}
	if err := resp.Err(); err != nil {
		return mapError(err)
	}
	if resp.Canceled {
		return errors.New("etcd canceled the watch")
	}
	return nil
}

// send delivers e unless ctx ends first; it reports whether e was delivered.
func send(ctx context.Context, out chan<- storage.Event, e storage.Event) bool {
	select {
	case out <- e:
		return true
	case <-ctx.Done():
		return false
	}
}

// sendFinal delivers a last error event and closes out.
func sendFinal(ctx context.Context, out chan<- storage.Event, err error) {
	defer close(out)
	send(ctx, out, storage.Event{Err: err})
}
