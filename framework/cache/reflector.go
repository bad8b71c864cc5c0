package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// Default backoff bounds of a Reflector.
const (
	DefaultInitialBackoff = 100 * time.Millisecond
	DefaultMaxBackoff     = 10 * time.Second
)

// minHealthyWatch is how long a watch must last, or how many events it must
// deliver, for its end not to count as a failure (avoids hot loops against a
// server that closes every watch at once).
const minHealthyWatch = time.Second

// ReflectorOptions configure a Reflector. The zero value is usable.
type ReflectorOptions[T api.Object] struct {
	// ListOptions restrict the collection (namespace, label and field
	// selectors); they are passed to every list and watch.
	ListOptions []client.ListOption
	// Transform, if set, is applied to every object before it is stored (e.g.
	// to drop managedFields). It may modify its argument in place.
	Transform func(T) T
	// Deliver, if set, is called for every change with a function that applies
	// it to the store and returns the resulting events. It must call apply
	// exactly once. Informers use it to hand events to handlers while holding
	// their dispatch lock. By default the events are dropped.
	Deliver func(apply func() []Event[T])
	// OnSynced, if set, is called once, after the first list has been stored.
	OnSynced func()
	// OnError, if set, receives list and watch errors (the Reflector retries).
	OnError func(error)
	// InitialBackoff and MaxBackoff bound the exponential backoff after errors
	// (defaults DefaultInitialBackoff and DefaultMaxBackoff).
	InitialBackoff, MaxBackoff time.Duration
}

// Reflector keeps a Store in step with the server: it lists, then watches from
// the list's resourceVersion; when a watch ends it resumes from the last
// resourceVersion it saw (an event's or a bookmark's); when the server answers
// 410 Gone/Expired it relists consistently (resourceVersion "") and turns the
// difference with the store into Added, Updated and Deleted events. Errors are
// retried with exponential backoff.
type Reflector[T api.Object] struct {
	lw    ListerWatcher[T]
	store *Store[T]
	opts  ReflectorOptions[T]

	// rv is the last resourceVersion seen; only Run's goroutine uses it.
	rv         string
	in         interner // of the objects stored; only Run's goroutine uses it
	syncedOnce sync.Once
}

// NewReflector returns a Reflector filling store from lw.
func NewReflector[T api.Object](lw ListerWatcher[T], store *Store[T], opts ReflectorOptions[T]) *Reflector[T] {
	if opts.InitialBackoff <= 0 {
		opts.InitialBackoff = DefaultInitialBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	if opts.MaxBackoff < opts.InitialBackoff {
		opts.MaxBackoff = opts.InitialBackoff
	}
	if opts.Deliver == nil {
		opts.Deliver = func(apply func() []Event[T]) { apply() }
	}
	return &Reflector[T]{lw: lw, store: store, opts: opts, in: newInterner()}
}

// errGone marks a watch that must be followed by a relist.
var errGone = errors.New("cache: resource version too old")

// Run lists and watches until ctx ends, then returns nil. It returns an error
// only for misuse that retrying cannot fix (none at present).
func (r *Reflector[T]) Run(ctx context.Context) error {
	backoff := r.opts.InitialBackoff
	wait := func() bool {
		t := time.NewTimer(backoff)
		defer t.Stop()
		backoff = min(2*backoff, r.opts.MaxBackoff)
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	// A fresh store may be filled from the server's cache (RV "0"); a store
	// that already holds data (a restarted informer) needs a consistent list so
	// it never goes back in time.
	listRV := "0"
	if r.store.Len() > 0 {
		listRV = ""
	}
	needList := true
	for ctx.Err() == nil {
		if needList {
			if err := r.list(ctx, listRV); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				r.report(err)
				if !wait() {
					return nil
				}
				continue
			}
			needList = false
			backoff = r.opts.InitialBackoff
		}
		start := time.Now()
		n, err := r.watch(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, errGone):
			needList, listRV = true, ""
		case err != nil:
			r.report(err)
			if !wait() {
				return nil
			}
		case n == 0 && time.Since(start) < minHealthyWatch:
			if !wait() {
				return nil
			}
		default:
			backoff = r.opts.InitialBackoff
		}
	}
	return nil
}

// LastResourceVersion returns the last resourceVersion the Reflector saw. Call
// it only from Deliver or after Run has returned.
func (r *Reflector[T]) LastResourceVersion() string { return r.rv }

func (r *Reflector[T]) report(err error) {
	if r.opts.OnError != nil {
		r.opts.OnError(err)
	}
}

func (r *Reflector[T]) transform(obj T) T {
	if r.opts.Transform != nil {
		return r.opts.Transform(obj)
	}
	return obj
}

// list replaces the store's content with a fresh list.
func (r *Reflector[T]) list(ctx context.Context, rv string) error {
	opts := append(append([]client.ListOption(nil), r.opts.ListOptions...), client.ResourceVersion(rv))
	items, listRV, err := r.lw.List(ctx, opts...)
	if err != nil {
		return fmt.Errorf("cache: list: %w", err)
	}
	for i := range items {
		items[i] = r.transform(items[i])
		r.in.object(items[i])
	}
	r.opts.Deliver(func() []Event[T] { return r.store.Replace(items, listRV) })
	r.rv = listRV
	r.syncedOnce.Do(func() {
		if r.opts.OnSynced != nil {
			r.opts.OnSynced()
		}
	})
	return nil
}

// watch watches from r.rv until the watch ends. It returns the number of
// events received and errGone when a relist is needed.
func (r *Reflector[T]) watch(ctx context.Context) (int, error) {
	opts := append(append([]client.ListOption(nil), r.opts.ListOptions...),
		client.ResourceVersion(r.rv), client.AllowWatchBookmarks(true))
	w, err := r.lw.Watch(ctx, opts...)
	if err != nil {
		if isGone(err) {
			return 0, errGone
		}
		return 0, fmt.Errorf("cache: watch from %q: %w", r.rv, err)
	}
	defer w.Stop()
	n := 0
	for ev := range w.ResultChan() {
		n++
		switch ev.Type {
		case client.Error:
			if isGone(ev.Err) {
				return n, errGone
			}
			return n, fmt.Errorf("cache: watch from %q: %w", r.rv, ev.Err)
		case client.Bookmark:
			if ev.Object != nil {
				if rv := ev.Object.GetResourceVersion(); rv != "" {
					r.rv = rv
					r.store.SetResourceVersion(rv)
				}
			}
		case client.Added, client.Modified, client.Deleted:
			obj, ok := ev.Object.(T)
			if !ok {
				return n, fmt.Errorf("cache: watch delivered %T, want %T", ev.Object, *new(T))
			}
			obj = r.transform(obj)
			if ev.Type != client.Deleted {
				r.in.object(obj)
			}
			r.opts.Deliver(func() []Event[T] { return r.apply(ev.Type, obj) })
			r.rv = obj.GetResourceVersion()
		default:
			return n, fmt.Errorf("cache: unexpected watch event type %q", ev.Type)
		}
	}
	return n, nil
}

// apply stores one watch change and returns the event it makes, if any.
// Duplicates (same resourceVersion) and deletes of unknown objects make none.
func (r *Reflector[T]) apply(typ client.EventType, obj T) []Event[T] {
	defer r.store.SetResourceVersion(obj.GetResourceVersion())
	key := KeyOf(obj)
	if typ == client.Deleted {
		if _, existed := r.store.Delete(key); !existed {
			return nil
		}
		return []Event[T]{{Type: Deleted, Object: obj}}
	}
	if cur, ok := r.store.Get(key); ok && cur.GetResourceVersion() == obj.GetResourceVersion() {
		return nil
	}
	old, existed := r.store.Upsert(obj)
	if !existed {
		return []Event[T]{{Type: Added, Object: obj}}
	}
	return []Event[T]{{Type: Updated, Object: obj, Old: old}}
}

func isGone(err error) bool {
	return apierrors.IsGone(err) || apierrors.IsResourceExpired(err)
}
