package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// ErrNotCached is returned by a Reader for a kind that has no informer yet: the
// Reader reads informers, it does not create them (InformerFor does, with the
// options that decide what is cached).
var ErrNotCached = errors.New("cache: no informer for this kind")

// Reader reads objects from the informers of a SharedInformers instead of the
// server, with the Get and List calls of client.Client, so that a controller
// reads from its cache and writes through the client. It waits for the
// informer's first sync; afterwards a read may lag the server slightly (the
// informer's consistency contract applies), and it sees only what the informer
// caches: its namespace, selectors and Transform.
//
// Objects are copied into the caller's obj or list (a JSON round trip), so
// callers may modify what they read.
type Reader struct {
	f *SharedInformers
}

// NewReader returns a Reader of f's informers.
func NewReader(f *SharedInformers) *Reader { return &Reader{f: f} }

var _ client.Reader = (*Reader)(nil)

// Get copies the cached object named key into obj (a pointer to a registered
// struct). It returns a NotFound StatusError when the informer does not hold
// it, and ErrNotCached when obj's kind has no informer.
func (r *Reader) Get(ctx context.Context, key client.ObjectKey, obj api.Object) error {
	gvk, err := r.f.c.GroupVersionKindFor(obj)
	if err != nil {
		return fmt.Errorf("cache: get: %w", err)
	}
	inf, err := r.synced(ctx, gvk)
	if err != nil {
		return fmt.Errorf("cache: get %s %s: %w", gvk.Kind, key, err)
	}
	cached, ok := inf.cached(key.String())
	if !ok {
		return r.notFound(ctx, gvk, key.Name)
	}
	if err := copyInto(cached, obj); err != nil {
		return fmt.Errorf("cache: get %s %s: %w", gvk.Kind, key, err)
	}
	return nil
}

// List fills list (a pointer to a registered list struct such as
// *corev1.ConfigMapList) with the cached objects that match opts: namespace,
// label selector, and field selectors on metadata.name, metadata.namespace
// and the fields indexed with IndexField (an equality on one of them is
// answered from its index; a namespace from the namespace index). Items come
// in key order; the list's resourceVersion is the informer's when the read
// began, so the items show every change up to it.
func (r *Reader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lgvk, err := r.f.c.GroupVersionKindFor(list)
	if err != nil {
		return fmt.Errorf("cache: list: %w", err)
	}
	gvk := lgvk
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	var o client.ListOptions
	for _, opt := range opts {
		opt.ApplyToList(&o)
	}
	inf, err := r.synced(ctx, gvk)
	if err != nil {
		return fmt.Errorf("cache: list %s: %w", gvk.Kind, err)
	}
	// The version is read before the objects: they show at least every
	// change up to it (a change applied in between may show too).
	rv := inf.resourceVersion()
	candidates, indexed := candidates(inf, &o)
	var items []api.Object
	for _, obj := range candidates {
		ok, err := matches(obj, &o, indexed)
		if err != nil {
			return fmt.Errorf("cache: list %s: %w", gvk.Kind, err)
		}
		if ok {
			items = append(items, obj)
		}
	}
	if items == nil {
		items = []api.Object{} // "items": [] rather than null
	}
	wire := struct {
		APIVersion string       `json:"apiVersion"`
		Kind       string       `json:"kind"`
		Metadata   api.ListMeta `json:"metadata"`
		Items      []api.Object `json:"items"`
	}{lgvk.GroupVersion().String(), lgvk.Kind, api.ListMeta{ResourceVersion: rv}, items}
	if err := copyInto(wire, list); err != nil {
		return fmt.Errorf("cache: list %s: %w", gvk.Kind, err)
	}
	return nil
}

// synced returns the informer of gvk once it has synced.
func (r *Reader) synced(ctx context.Context, gvk api.GroupVersionKind) (informer, error) {
	r.f.mu.Lock()
	e, ok := r.f.informers[gvk]
	r.f.mu.Unlock()
	if !ok {
		return nil, ErrNotCached
	}
	if !e.inf.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("cache: waiting for the informer to sync: %w", context.Cause(ctx))
	}
	return e.inf, nil
}

// notFound builds the server's NotFound answer, naming the resource when the
// client's mapper knows it.
func (r *Reader) notFound(ctx context.Context, gvk api.GroupVersionKind, name string) error {
	return notFound(ctx, r.f.c, gvk, name)
}

func notFound(ctx context.Context, c *client.Client, gvk api.GroupVersionKind, name string) error {
	gr := api.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}
	if m, err := c.RESTMapper().RESTMapping(ctx, gvk); err == nil {
		gr = m.Resource.GroupResource()
	}
	return apierrors.NewNotFound(gr, name)
}

// candidates returns the cached objects List must filter: those of an
// indexed field's value when the field selector requires one (and which
// field=value it guarantees), else those of the namespace, else all.
func candidates(inf informer, o *client.ListOptions) ([]api.Object, map[string]string) {
	if o.FieldSelector != nil {
		for _, req := range o.FieldSelector.Requirements() {
			if req.Field == "metadata.name" || req.Field == "metadata.namespace" {
				continue
			}
			if v, ok := o.FieldSelector.RequiresExactMatch(req.Field); ok {
				if objs, ok := inf.cachedByIndex(FieldIndexName(req.Field), v); ok {
					return objs, map[string]string{req.Field: v}
				}
			}
		}
	}
	if o.Namespace != "" {
		if objs, ok := inf.cachedByIndex(NamespaceIndex, o.Namespace); ok {
			return objs, nil
		}
	}
	return inf.cachedList(), nil
}

// matches applies the namespace and selectors of o to a cached object;
// indexed holds the field values its candidate list guarantees.
func matches(obj api.Object, o *client.ListOptions, indexed map[string]string) (bool, error) {
	if o.Namespace != "" && obj.GetNamespace() != o.Namespace {
		return false, nil
	}
	if o.LabelSelector != nil && !o.LabelSelector.Matches(obj.GetLabels()) {
		return false, nil
	}
	if o.FieldSelector != nil && !o.FieldSelector.Empty() {
		for _, req := range o.FieldSelector.Requirements() {
			if _, ok := indexed[req.Field]; !ok && req.Field != "metadata.name" && req.Field != "metadata.namespace" {
				return false, fmt.Errorf("field selector %q: the cache selects on metadata.name, metadata.namespace and equality on a field indexed with IndexField", o.FieldSelector.String())
			}
		}
		fields := map[string]string{"metadata.name": obj.GetName(), "metadata.namespace": obj.GetNamespace()}
		maps.Copy(fields, indexed)
		if !o.FieldSelector.Matches(fields) {
			return false, nil
		}
	}
	return true, nil
}

// copyInto replaces *dst with a deep copy of src through JSON.
func copyInto(src any, dst any) error {
	b, err := json.Marshal(src)
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("copy: %T is not a non-nil pointer", dst)
	}
	v.Elem().SetZero()
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	return nil
}
