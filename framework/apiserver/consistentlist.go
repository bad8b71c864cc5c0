package apiserver

import (
	"context"
	"errors"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
)

// consistentListTimeout bounds the wait for a watch cache to catch up with
// storage before a consistent list falls back to reading storage.
const consistentListTimeout = time.Second

// consistentCache returns the watch cache of res when it can serve a
// consistent list (resourceVersion unset: the latest state), as
// kube-apiserver's consistent reads from cache do: the store's current
// revision is read, the cache's watch is asked for its progress, and the
// cache is used once it has applied every change up to that revision (etcd
// answers a progress request once every watch on the stream is in sync, so
// the answer can be late while a watch catches up). It
// returns nil — read storage instead — when res has no running cache (one is
// not started for a list), the store cannot report progress, or the cache
// did not catch up within consistentListTimeout.
func (s *Server) consistentCache(ctx context.Context, res *registry.Resource) *watchCache {
	pr, ok := s.opts.Storage.(storage.ProgressRequester)
	if !ok {
		return nil
	}
	h, ok := s.started.Load(storagePrefix(res))
	if !ok {
		return nil
	}
	wc := h.(*cacheHandle).cache
	if _, ready := wc.size(); !ready {
		return nil
	}
	cur, err := s.opts.Storage.CurrentRevision(ctx)
	if err != nil {
		return nil
	}
	if wc.currentRV() >= cur {
		return wc
	}
	if err := pr.RequestProgress(ctx); err != nil {
		if !errors.Is(err, errors.ErrUnsupported) {
			s.log.V(1).Info("Watch progress request failed; listing from storage", "error", err.Error())
		}
		return nil
	}
	if !wc.waitForRV(ctx, cur, consistentListTimeout) {
		return nil
	}
	return wc
}

// RequestProgress forwards to the wrapped store (storage.ProgressRequester).
func (s instrumentedStorage) RequestProgress(ctx context.Context) error {
	if pr, ok := s.Interface.(storage.ProgressRequester); ok {
		return pr.RequestProgress(ctx)
	}
	return errors.ErrUnsupported
}
