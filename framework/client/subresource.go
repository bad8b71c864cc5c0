package client

import (
	"context"
	"fmt"
	"net/http"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client/rest"
)

// StatusWriter writes the status subresource: only .status changes, spec and
// generation stay as they are on the server.
type StatusWriter interface {
	// Update replaces obj's status and updates obj from the answer.
	Update(ctx context.Context, obj api.Object, opts ...UpdateOption) error
	// Patch patches obj's status and updates obj from the answer.
	Patch(ctx context.Context, obj api.Object, patch Patch, opts ...PatchOption) error
}

// SubResourceClient reads and writes one subresource (scale, status, binding,
// eviction, ...) of the object obj names. sub is the subresource's own object
// (a Scale, a Binding, an Eviction); for writes a nil sub sends obj itself.
// Whatever was sent is updated from the server's answer, unless the answer is a
// plain Status (binding, eviction).
type SubResourceClient interface {
	Get(ctx context.Context, obj, sub api.Object) error
	Create(ctx context.Context, obj, sub api.Object, opts ...CreateOption) error
	Update(ctx context.Context, obj, sub api.Object, opts ...UpdateOption) error
	Patch(ctx context.Context, obj, sub api.Object, patch Patch, opts ...PatchOption) error
}

// Status returns a writer for the status subresource.
func (c *Client) Status() StatusWriter { return statusWriter{c: c} }

// SubResource returns a client for the subresource name ("scale", "binding", ...).
func (c *Client) SubResource(name string) SubResourceClient {
	return subResourceClient{c: c, name: name}
}

type statusWriter struct{ c *Client }

func (w statusWriter) Update(ctx context.Context, obj api.Object, opts ...UpdateOption) error {
	return w.c.update(ctx, obj, nil, "status", opts)
}

func (w statusWriter) Patch(ctx context.Context, obj api.Object, patch Patch, opts ...PatchOption) error {
	return w.c.patch(ctx, obj, nil, "status", patch, opts)
}

type subResourceClient struct {
	c    *Client
	name string
}

func (s subResourceClient) Get(ctx context.Context, obj, sub api.Object) error {
	t, err := s.c.resolve(ctx, obj)
	if err != nil {
		return fmt.Errorf("get %s: %w", s.name, err)
	}
	resp, err := s.c.rc.Do(ctx, rest.Request{Method: http.MethodGet, Path: t.path(obj.GetNamespace(), obj.GetName(), s.name)})
	if err != nil {
		return err
	}
	return decodeInto(resp.Body, sub)
}

func (s subResourceClient) Create(ctx context.Context, obj, sub api.Object, opts ...CreateOption) error {
	t, err := s.c.resolve(ctx, obj)
	if err != nil {
		return fmt.Errorf("create %s: %w", s.name, err)
	}
	data, err := s.c.encodeBody(obj, sub, t)
	if err != nil {
		return err
	}
	q := writeQuery(func(o *WriteOptions) {
		for _, opt := range opts {
			opt.ApplyToCreate(o)
		}
	})
	resp, err := s.c.rc.Do(ctx, rest.Request{Method: http.MethodPost, Path: t.path(obj.GetNamespace(), obj.GetName(), s.name), Query: q, Body: data})
	if err != nil {
		return err
	}
	out := sub
	if out == nil {
		out = obj
	}
	if len(resp.Body) == 0 || isStatus(resp.Body) {
		return nil
	}
	return decodeInto(resp.Body, out)
}

func (s subResourceClient) Update(ctx context.Context, obj, sub api.Object, opts ...UpdateOption) error {
	return s.c.update(ctx, obj, sub, s.name, opts)
}

func (s subResourceClient) Patch(ctx context.Context, obj, sub api.Object, patch Patch, opts ...PatchOption) error {
	return s.c.patch(ctx, obj, sub, s.name, patch, opts)
}
