package apiserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/converge-dev/converge/framework/api"
)

// ErrNotServed is returned by CachedObjects for a resource the registry does not
// hold.
var ErrNotServed = errors.New("apiserver: resource not served")

// CachedObjects returns the objects of resource gvr held by its watch cache, in
// namespace (all namespaces when empty), sorted by key, and the cache's revision,
// which changes whenever one of the resource's objects does. Each item is the
// stored JSON (storage version, resourceVersion included); it is shared, so
// callers must not modify it. Reads are eventually consistent: a write is seen
// once the cache's storage watch delivered it. In-process components
// (authorizers, admission plugins) use it instead of listing over HTTP.
func (s *Server) CachedObjects(ctx context.Context, gvr api.GroupVersionResource, namespace string) ([][]byte, int64, error) {
	res := s.opts.Registry.Get(gvr)
	if res == nil {
		return nil, 0, fmt.Errorf("%w: %s", ErrNotServed, gvr)
	}
	wc, err := s.cacheFor(ctx, res)
	if err != nil {
		return nil, 0, err
	}
	objs, rv := wc.list(objectFilter{namespace: namespace})
	out := make([][]byte, len(objs))
	for i, o := range objs {
		out[i] = o.data
	}
	return out, rv, nil
}
