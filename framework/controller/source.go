package controller

import (
	"context"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/predicate"
)

// Kind returns a Source over a typed informer: every event that passes all
// preds goes to h. The informer is run by its owner (e.g. a manager's shared
// informers); the source only registers a handler and waits for its sync.
// Handlers of an informer cannot be removed: after the controller stops, its
// handler keeps running but its queue ignores the adds.
func Kind[T api.Object](inf *cache.Informer[T], h handler.EventHandler, preds ...predicate.Predicate) Source {
	return &kind[T]{inf: inf, h: h, preds: preds}
}

type kind[T api.Object] struct {
	inf   *cache.Informer[T]
	h     handler.EventHandler
	preds []predicate.Predicate
}

// Start registers the handler.
func (k *kind[T]) Start(ctx context.Context, q handler.Queue) error {
	k.inf.AddHandler(func(ev cache.Event[T]) {
		e := handler.Event{Type: ev.Type, Object: ev.Object}
		if ev.Type == cache.Updated {
			e.Old = ev.Old
		}
		for _, p := range k.preds {
			if !p.Allow(e) {
				return
			}
		}
		k.h.Handle(ctx, e, q)
	})
	return nil
}

// WaitForSync waits for the informer's first list.
func (k *kind[T]) WaitForSync(ctx context.Context) bool { return k.inf.WaitForCacheSync(ctx) }
