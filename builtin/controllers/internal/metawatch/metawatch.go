// Package metawatch lists and watches any kind as Unstructured objects and
// trims them to their metadata, for the informers of controllers that
// handle resources they have no Go type for (the garbage collector's graph,
// the quota monitors).
package metawatch

import (
	"context"
	"fmt"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// ListWatch is a cache.ListerWatcher of one kind as Unstructured objects.
type ListWatch struct {
	Client *client.Client
	GVK    api.GroupVersionKind
}

func (lw *ListWatch) list() *api.UnstructuredList {
	return &api.UnstructuredList{APIVersion: lw.GVK.APIVersion(), Kind: lw.GVK.Kind + "List"}
}

// List implements cache.ListerWatcher.
func (lw *ListWatch) List(ctx context.Context, opts ...client.ListOption) ([]*api.Unstructured, string, error) {
	l := lw.list()
	if err := lw.Client.List(ctx, l, opts...); err != nil {
		return nil, "", fmt.Errorf("list %s: %w", lw.GVK, err)
	}
	out := make([]*api.Unstructured, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
		out[i].SetGroupVersionKind(lw.GVK)
	}
	return out, l.Metadata.ResourceVersion, nil
}

// Watch implements cache.ListerWatcher.
func (lw *ListWatch) Watch(ctx context.Context, opts ...client.ListOption) (client.Watcher, error) {
	w, err := lw.Client.Watch(ctx, lw.list(), opts...)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", lw.GVK, err)
	}
	return w, nil
}

// Keep returns a Transform that keeps apiVersion, kind and the named
// metadata fields, so that stores stay small whatever the objects hold.
func Keep(fields ...string) func(*api.Unstructured) *api.Unstructured {
	return func(u *api.Unstructured) *api.Unstructured {
		meta := api.NestedMap(u.Object, "metadata")
		keep := map[string]any{}
		for _, k := range fields {
			if v, ok := meta[k]; ok {
				keep[k] = v
			}
		}
		return &api.Unstructured{Object: map[string]any{
			"apiVersion": u.Object["apiVersion"],
			"kind":       u.Object["kind"],
			"metadata":   keep,
		}}
	}
}
