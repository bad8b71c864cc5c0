package client

import (
	"context"

	"github.com/converge-dev/converge/framework/api"
)

// Reader reads objects. *Client reads the server; the manager's cache
// (cache.Reader) reads the informers, which is how reconcilers read the
// kinds their controller watches (see framework/cache).
type Reader interface {
	Get(ctx context.Context, key ObjectKey, obj api.Object) error
	List(ctx context.Context, list ObjectList, opts ...ListOption) error
}

var _ Reader = (*Client)(nil)
