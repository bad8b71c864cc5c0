package cache

import (
	"context"
	"fmt"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// Lister reads the cached objects of one kind like a Reader (same selectors,
// same indexes, same wait for the first sync), but without copying them: what
// it returns is the cache's own objects, shared with every other reader and
// with the informer's handlers, and must not be modified (copy first). It is
// for hot paths that read many objects per reconcile, where a Reader's copies
// would cost more than the reconcile.
type Lister[T api.Object] struct {
	c   *client.Client
	inf *Informer[T]
	gvk api.GroupVersionKind
}

// ListerFor returns a Lister of T's kind in f, creating its informer as
// InformerFor does if no one asked for it yet.
func ListerFor[T api.Object](f *SharedInformers) (*Lister[T], error) {
	lw, err := NewClientListWatch[T](f.c)
	if err != nil {
		return nil, err
	}
	inf, err := InformerFor(f, InformerOptions[T]{})
	if err != nil {
		return nil, err
	}
	return &Lister[T]{c: f.c, inf: inf, gvk: lw.GroupVersionKind()}, nil
}

// Get returns the cached object named key, or a NotFound StatusError.
func (l *Lister[T]) Get(ctx context.Context, key client.ObjectKey) (T, error) {
	var zero T
	if !l.inf.WaitForCacheSync(ctx) {
		return zero, fmt.Errorf("cache: get %s %s: waiting for the informer to sync: %w", l.gvk.Kind, key, context.Cause(ctx))
	}
	obj, ok := l.inf.Store().Get(key.String())
	if !ok {
		return zero, notFound(ctx, l.c, l.gvk, key.Name)
	}
	return obj, nil
}

// List returns the cached objects that match opts, as Reader.List selects
// them, in key order.
func (l *Lister[T]) List(ctx context.Context, opts ...client.ListOption) ([]T, error) {
	var o client.ListOptions
	for _, opt := range opts {
		opt.ApplyToList(&o)
	}
	if !l.inf.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("cache: list %s: waiting for the informer to sync: %w", l.gvk.Kind, context.Cause(ctx))
	}
	cands, indexed := candidates(l.inf, &o)
	var out []T
	for _, obj := range cands {
		ok, err := matches(obj, &o, indexed)
		if err != nil {
			return nil, fmt.Errorf("cache: list %s: %w", l.gvk.Kind, err)
		}
		if ok {
			out = append(out, obj.(T))
		}
	}
	return out, nil
}
