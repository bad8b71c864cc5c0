package garbagecollector

import (
	"context"
	"fmt"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// metadataListWatch lists and watches one resource as Unstructured objects.
type metadataListWatch struct {
	c   *client.Client
	gvk api.GroupVersionKind
}

func (lw *metadataListWatch) list() *api.UnstructuredList {
	return &api.UnstructuredList{APIVersion: lw.gvk.APIVersion(), Kind: lw.gvk.Kind + "List"}
}

// List implements cache.ListerWatcher.
func (lw *metadataListWatch) List(ctx context.Context, opts ...client.ListOption) ([]*api.Unstructured, string, error) {
	l := lw.list()
	if err := lw.c.List(ctx, l, opts...); err != nil {
		return nil, "", fmt.Errorf("list %s: %w", lw.gvk, err)
	}
	out := make([]*api.Unstructured, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
		out[i].SetGroupVersionKind(lw.gvk)
	}
	return out, l.Metadata.ResourceVersion, nil
}

// Watch implements cache.ListerWatcher.
func (lw *metadataListWatch) Watch(ctx context.Context, opts ...client.ListOption) (client.Watcher, error) {
	w, err := lw.c.Watch(ctx, lw.list(), opts...)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", lw.gvk, err)
	}
	return w, nil
}

// metadataOnly keeps only what the graph needs, so the informers' stores stay
// small whatever the objects hold.
func metadataOnly(u *api.Unstructured) *api.Unstructured {
	meta := api.NestedMap(u.Object, "metadata")
	keep := map[string]any{}
	for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "deletionTimestamp", "finalizers", "ownerReferences"} {
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
