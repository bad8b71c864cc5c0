package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/fields"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
)

// ErrRunning is returned by Informer.Start when the informer is already running.
var ErrRunning = errors.New("cache: informer is already running")

// Handler receives the events of an Informer.
type Handler[T api.Object] func(Event[T])

// InformerOptions configure an Informer. The zero value watches every object
// of the kind in all namespaces.
type InformerOptions[T api.Object] struct {
	// Namespace restricts the informer to one namespace ("" = all).
	Namespace string
	// LabelSelector and FieldSelector restrict the objects (nil = all).
	LabelSelector labels.Selector
	FieldSelector fields.Selector
	// Indexers are added to the store's built-in NamespaceIndex.
	Indexers Indexers[T]
	// Transform, if set, is applied to every object before it is stored and
	// handed to handlers (e.g. to drop managedFields).
	Transform func(T) T
	// OnError, if set, receives list and watch errors (they are retried).
	OnError func(error)
	// InitialBackoff and MaxBackoff bound the retry backoff (defaults
	// DefaultInitialBackoff and DefaultMaxBackoff).
	InitialBackoff, MaxBackoff time.Duration
}

// Informer keeps a Store of one kind in step with the server and calls
// handlers for every change. See the package documentation for its
// consistency contract.
//
// Handlers are called one at a time, in the order they were added, from the
// single goroutine that runs Start, after the change is in the Store. A slow
// handler delays the watch: handlers should only enqueue work. Handlers must
// not call AddHandler.
type Informer[T api.Object] struct {
	lw    ListerWatcher[T]
	opts  InformerOptions[T]
	store *Store[T]

	// dispatchMu is held while a change is applied to the store and delivered,
	// and by AddHandler; it is never taken while holding stateMu.
	dispatchMu sync.Mutex
	handlers   []Handler[T] // guarded by dispatchMu

	stateMu sync.Mutex
	running bool          // guarded by stateMu
	synced  chan struct{} // closed once the running informer has synced; guarded by stateMu
}

// NewInformer returns an informer over lw. It does nothing until Start.
func NewInformer[T api.Object](lw ListerWatcher[T], opts InformerOptions[T]) *Informer[T] {
	return &Informer[T]{lw: lw, opts: opts, store: NewStore(opts.Indexers), synced: make(chan struct{})}
}

// NewClientInformer returns an informer for T (e.g. *corev1.ConfigMap) using c.
func NewClientInformer[T api.Object](c *client.Client, opts InformerOptions[T]) (*Informer[T], error) {
	lw, err := NewClientListWatch[T](c)
	if err != nil {
		return nil, err
	}
	return NewInformer[T](lw, opts), nil
}

// Store returns the informer's store for reads. Its objects are shared: do
// not modify them.
func (i *Informer[T]) Store() *Store[T] { return i.store }

// AddHandler adds h. If the informer already holds objects, h is first called
// with an Added event for each of them (in key order), so every handler sees
// every object's states as a subsequence of the server's.
func (i *Informer[T]) AddHandler(h Handler[T]) {
	i.dispatchMu.Lock()
	defer i.dispatchMu.Unlock()
	for _, obj := range i.store.List() {
		h(Event[T]{Type: Added, Object: obj})
	}
	i.handlers = append(i.handlers, h)
}

// HasSynced reports whether the running informer has stored its first list.
// It is false before Start and again after Start returns.
func (i *Informer[T]) HasSynced() bool {
	i.stateMu.Lock()
	ch := i.synced
	i.stateMu.Unlock()
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// WaitForCacheSync waits until HasSynced or ctx ends and reports HasSynced.
func (i *Informer[T]) WaitForCacheSync(ctx context.Context) bool {
	i.stateMu.Lock()
	ch := i.synced
	i.stateMu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return i.HasSynced()
	}
}

// Start runs the informer until ctx ends, then returns nil. It may be called
// again after it has returned (the store is kept; the first list then turns
// the differences into events). It returns ErrRunning if already running.
func (i *Informer[T]) Start(ctx context.Context) error {
	i.stateMu.Lock()
	if i.running {
		i.stateMu.Unlock()
		return ErrRunning
	}
	i.running = true
	synced := i.synced
	i.stateMu.Unlock()
	defer func() {
		i.stateMu.Lock()
		defer i.stateMu.Unlock()
		i.running = false
		select {
		case <-i.synced:
			i.synced = make(chan struct{})
		default:
		}
	}()

	lo := &client.ListOptions{Namespace: i.opts.Namespace, LabelSelector: i.opts.LabelSelector, FieldSelector: i.opts.FieldSelector}
	r := NewReflector(i.lw, i.store, ReflectorOptions[T]{
		ListOptions:    []client.ListOption{lo},
		Transform:      i.opts.Transform,
		Deliver:        i.deliver,
		OnSynced:       func() { close(synced) },
		OnError:        i.opts.OnError,
		InitialBackoff: i.opts.InitialBackoff,
		MaxBackoff:     i.opts.MaxBackoff,
	})
	if err := r.Run(ctx); err != nil {
		return fmt.Errorf("cache: informer: %w", err)
	}
	return nil
}

func (i *Informer[T]) deliver(apply func() []Event[T]) {
	i.dispatchMu.Lock()
	defer i.dispatchMu.Unlock()
	for _, ev := range apply() {
		for _, h := range i.handlers {
			h(ev)
		}
	}
}

func (i *Informer[T]) cached(key string) (api.Object, bool) {
	obj, ok := i.store.Get(key)
	if !ok {
		return nil, false
	}
	return obj, true
}

func (i *Informer[T]) cachedList() []api.Object {
	objs := i.store.List()
	out := make([]api.Object, len(objs))
	for j, obj := range objs {
		out[j] = obj
	}
	return out
}

func (i *Informer[T]) cachedByIndex(index, value string) ([]api.Object, bool) {
	objs, err := i.store.ByIndex(index, value)
	if err != nil {
		return nil, false // no such index
	}
	out := make([]api.Object, len(objs))
	for j, obj := range objs {
		out[j] = obj
	}
	return out, true
}

func (i *Informer[T]) resourceVersion() string { return i.store.ResourceVersion() }
