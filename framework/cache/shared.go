package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// ErrStarted is returned by SharedInformers.Start when it is already running.
var ErrStarted = errors.New("cache: shared informers already started")

// informer is the type-independent part of *Informer[T].
type informer interface {
	Start(ctx context.Context) error
	HasSynced() bool
	WaitForCacheSync(ctx context.Context) bool

	// For Reader: the stored object of a key, every stored object in key
	// order, and the store's resourceVersion.
	cached(key string) (api.Object, bool)
	cachedList() []api.Object
	// cachedByIndex returns the objects of one index value in key order;
	// false when there is no such index.
	cachedByIndex(index, value string) ([]api.Object, bool)
	resourceVersion() string
}

// sharedEntry is one informer of a SharedInformers with its run state.
type sharedEntry struct {
	inf      informer
	borrowed bool               // run by another SharedInformers (see Share): never started or stopped here
	cancel   context.CancelFunc // set while running
	done     chan struct{}      // closed when its Start returned; set while running
}

// SharedOptions configure a SharedInformers.
type SharedOptions struct {
	// DefaultTransform, if set, is the Transform of every informer created
	// without one (e.g. StripManagedFields). It must return an object of the
	// type it was given.
	DefaultTransform func(api.Object) api.Object
}

// SharedInformers gives a process one informer, hence one watch, per kind.
// Informers are created on first request by InformerFor and run while the
// factory runs (an informer requested after Start starts at once). Stop ends
// and forgets one kind's informer (e.g. when its CRD is deleted).
type SharedInformers struct {
	c    *client.Client
	opts SharedOptions

	mu        sync.Mutex
	informers map[api.GroupVersionKind]*sharedEntry // guarded by mu
	ctx       context.Context                       // the running Start's context, nil when stopped; guarded by mu
}

// NewSharedInformers returns a factory of informers backed by c.
func NewSharedInformers(c *client.Client) *SharedInformers {
	return NewSharedInformersWithOptions(c, SharedOptions{})
}

// NewSharedInformersWithOptions returns a factory of informers backed by c,
// configured by opts.
func NewSharedInformersWithOptions(c *client.Client, opts SharedOptions) *SharedInformers {
	return &SharedInformers{c: c, opts: opts, informers: map[api.GroupVersionKind]*sharedEntry{}}
}

// InformerFor returns the informer of T's kind, creating it with opts on first
// use; later calls return the same informer and ignore opts. Whoever asks
// first therefore decides namespace, selectors, indexers and Transform (the
// factory's DefaultTransform when opts has none).
func InformerFor[T api.Object](f *SharedInformers, opts InformerOptions[T]) (*Informer[T], error) {
	lw, err := NewClientListWatch[T](f.c)
	if err != nil {
		return nil, err
	}
	gvk := lw.GroupVersionKind()
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.informers[gvk]; ok {
		inf, ok := e.inf.(*Informer[T])
		if !ok {
			return nil, fmt.Errorf("cache: informer for %v has type %T, not *Informer[%T]", gvk, e.inf, *new(T))
		}
		return inf, nil
	}
	if opts.Transform == nil && f.opts.DefaultTransform != nil {
		def := f.opts.DefaultTransform
		opts.Transform = func(obj T) T {
			if out, ok := def(obj).(T); ok {
				return out
			}
			return obj
		}
	}
	inf := NewInformer[T](lw, opts)
	e := &sharedEntry{inf: inf}
	f.informers[gvk] = e
	if f.ctx != nil {
		f.run(e)
	}
	return inf, nil
}

// Share makes inf, an informer that another factory runs (e.g. another
// component's in the same process), f's informer of T's kind: InformerFor,
// Readers and WaitForCacheSync of f use it, so both components read one cache
// fed by one watch. f never starts or stops it; Stop only forgets it. It fails
// if f already has an informer of that kind.
func Share[T api.Object](f *SharedInformers, inf *Informer[T]) error {
	lw, err := NewClientListWatch[T](f.c)
	if err != nil {
		return err
	}
	gvk := lw.GroupVersionKind()
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.informers[gvk]; ok {
		return fmt.Errorf("cache: share informer for %v: the factory already has one", gvk)
	}
	f.informers[gvk] = &sharedEntry{inf: inf, borrowed: true}
	return nil
}

// run starts e under f.ctx unless it is borrowed; f.mu must be held.
func (f *SharedInformers) run(e *sharedEntry) {
	if e.borrowed {
		return
	}
	ctx, cancel := context.WithCancel(f.ctx)
	e.cancel, e.done = cancel, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		_ = e.inf.Start(ctx) // only ErrRunning, impossible here: the factory owns it
	}(e.done)
}

// Start runs every informer, present and future, until ctx ends, then waits
// for them to return and returns nil.
func (f *SharedInformers) Start(ctx context.Context) error {
	f.mu.Lock()
	if f.ctx != nil {
		f.mu.Unlock()
		return ErrStarted
	}
	f.ctx = ctx
	for _, e := range f.informers {
		f.run(e)
	}
	f.mu.Unlock()

	<-ctx.Done()

	f.mu.Lock()
	f.ctx = nil
	var dones []chan struct{}
	for _, e := range f.informers {
		if e.done != nil {
			dones = append(dones, e.done)
			e.cancel()
			e.cancel, e.done = nil, nil
		}
	}
	f.mu.Unlock()
	for _, d := range dones {
		<-d
	}
	return nil
}

// Stop stops and forgets the informer of gvk, if any, and waits until it has
// returned. A later InformerFor creates a new one.
func (f *SharedInformers) Stop(gvk api.GroupVersionKind) {
	f.mu.Lock()
	var cancel context.CancelFunc
	var done chan struct{}
	if e, ok := f.informers[gvk]; ok {
		cancel, done = e.cancel, e.done
		delete(f.informers, gvk)
	}
	f.mu.Unlock()
	if done != nil {
		cancel()
		<-done
	}
}

// WaitForCacheSync waits until every current informer has synced or ctx ends,
// and reports whether all have synced.
func (f *SharedInformers) WaitForCacheSync(ctx context.Context) bool {
	f.mu.Lock()
	infs := make([]informer, 0, len(f.informers))
	for _, e := range f.informers {
		infs = append(infs, e.inf)
	}
	f.mu.Unlock()
	for _, inf := range infs {
		if !inf.WaitForCacheSync(ctx) {
			return false
		}
	}
	return true
}
