package metawatch

import (
	"context"
	"fmt"
	"sync"
	"unique"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// Meta is the metadata of an object that a graph of owners and dependents
// needs (name, namespace, uid, resourceVersion, deletionTimestamp,
// finalizers, ownerReferences) and nothing else: ≈200 bytes per object
// where the same fields as an Unstructured (two maps of boxed values) took
// ≈1 KB, for every object of every resource the garbage collector watches.
// It implements api.Object; the setters of fields it does not keep (labels,
// annotations) drop their value. Objects in a cache are shared: read only.
type Meta struct {
	gvk               *api.GroupVersionKind // shared by the objects of one ListWatch
	name, namespace   string
	uid, rv           string
	deletionTimestamp *api.Time
	finalizers        []string
	ownerReferences   []api.OwnerReference
}

// MetaOf returns the Meta of u, with gvk (shared, not copied) as its kind.
func MetaOf(u *api.Unstructured, gvk *api.GroupVersionKind) *Meta {
	return &Meta{
		gvk:               gvk,
		name:              u.GetName(),
		namespace:         unique.Make(u.GetNamespace()).Value(),
		uid:               u.GetUID(),
		rv:                u.GetResourceVersion(),
		deletionTimestamp: u.GetDeletionTimestamp(),
		finalizers:        u.GetFinalizers(),
		ownerReferences:   u.GetOwnerReferences(),
	}
}

// GroupVersionKind implements api.Object.
func (m *Meta) GroupVersionKind() api.GroupVersionKind {
	if m.gvk == nil {
		return api.GroupVersionKind{}
	}
	return *m.gvk
}

// SetGroupVersionKind implements api.Object.
func (m *Meta) SetGroupVersionKind(gvk api.GroupVersionKind) { m.gvk = &gvk }

// GetName implements api.Object.
func (m *Meta) GetName() string { return m.name }

// SetName implements api.Object.
func (m *Meta) SetName(v string) { m.name = v }

// GetGenerateName implements api.Object; Meta does not keep it.
func (m *Meta) GetGenerateName() string { return "" }

// GetNamespace implements api.Object.
func (m *Meta) GetNamespace() string { return m.namespace }

// SetNamespace implements api.Object.
func (m *Meta) SetNamespace(v string) { m.namespace = v }

// GetUID implements api.Object.
func (m *Meta) GetUID() string { return m.uid }

// GetResourceVersion implements api.Object.
func (m *Meta) GetResourceVersion() string { return m.rv }

// SetResourceVersion implements api.Object.
func (m *Meta) SetResourceVersion(v string) { m.rv = v }

// GetGeneration implements api.Object; Meta does not keep it.
func (m *Meta) GetGeneration() int64 { return 0 }

// GetCreationTimestamp implements api.Object; Meta does not keep it.
func (m *Meta) GetCreationTimestamp() api.Time { return api.Time{} }

// GetDeletionTimestamp implements api.Object.
func (m *Meta) GetDeletionTimestamp() *api.Time { return m.deletionTimestamp }

// GetLabels implements api.Object; Meta does not keep them.
func (m *Meta) GetLabels() map[string]string { return nil }

// SetLabels implements api.Object; Meta does not keep them.
func (m *Meta) SetLabels(map[string]string) {}

// GetAnnotations implements api.Object; Meta does not keep them.
func (m *Meta) GetAnnotations() map[string]string { return nil }

// SetAnnotations implements api.Object; Meta does not keep them.
func (m *Meta) SetAnnotations(map[string]string) {}

// GetFinalizers implements api.Object.
func (m *Meta) GetFinalizers() []string { return m.finalizers }

// SetFinalizers implements api.Object.
func (m *Meta) SetFinalizers(v []string) { m.finalizers = v }

// GetOwnerReferences implements api.Object.
func (m *Meta) GetOwnerReferences() []api.OwnerReference { return m.ownerReferences }

// SetOwnerReferences implements api.Object.
func (m *Meta) SetOwnerReferences(v []api.OwnerReference) { m.ownerReferences = v }

// MetaListWatch is a cache.ListerWatcher of one kind as Meta objects: it lists
// and watches as ListWatch does and keeps each object's Meta only.
type MetaListWatch struct {
	lw  ListWatch
	gvk *api.GroupVersionKind
}

// NewMetaListWatch returns the MetaListWatch of gvk through c.
func NewMetaListWatch(c *client.Client, gvk api.GroupVersionKind) *MetaListWatch {
	return &MetaListWatch{lw: ListWatch{Client: c, GVK: gvk}, gvk: &gvk}
}

// List implements cache.ListerWatcher.
func (lw *MetaListWatch) List(ctx context.Context, opts ...client.ListOption) ([]*Meta, string, error) {
	items, rv, err := lw.lw.List(ctx, opts...)
	if err != nil {
		return nil, "", err
	}
	out := make([]*Meta, len(items))
	for i, u := range items {
		out[i] = MetaOf(u, lw.gvk)
	}
	return out, rv, nil
}

// Watch implements cache.ListerWatcher: its events carry *Meta objects.
func (lw *MetaListWatch) Watch(ctx context.Context, opts ...client.ListOption) (client.Watcher, error) {
	w, err := lw.lw.Watch(ctx, opts...)
	if err != nil {
		return nil, err
	}
	mw := &metaWatcher{w: w, ch: make(chan client.Event), done: make(chan struct{})}
	go mw.run(lw.gvk)
	return mw, nil
}

// metaWatcher turns the Unstructured objects of w's events into Meta.
type metaWatcher struct {
	w    client.Watcher
	ch   chan client.Event
	done chan struct{}
	once sync.Once
}

func (mw *metaWatcher) run(gvk *api.GroupVersionKind) {
	defer close(mw.ch)
	for ev := range mw.w.ResultChan() {
		if u, ok := ev.Object.(*api.Unstructured); ok {
			ev.Object = MetaOf(u, gvk)
		} else if ev.Object != nil {
			ev = client.Event{Type: client.Error, Err: fmt.Errorf("watch %s: unexpected %T", gvk, ev.Object)}
		}
		select {
		case mw.ch <- ev:
		case <-mw.done:
			return
		}
	}
}

// ResultChan implements client.Watcher.
func (mw *metaWatcher) ResultChan() <-chan client.Event { return mw.ch }

// Stop implements client.Watcher.
func (mw *metaWatcher) Stop() {
	mw.once.Do(func() { close(mw.done) })
	mw.w.Stop()
}
