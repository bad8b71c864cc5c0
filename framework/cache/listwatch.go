package cache

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// ListerWatcher lists and watches one collection of T. Options (namespace,
// selectors, resourceVersion, bookmarks) are client list options.
type ListerWatcher[T api.Object] interface {
	// List returns the items and the list's resourceVersion.
	List(ctx context.Context, opts ...client.ListOption) (items []T, rv string, err error)
	// Watch starts a watch; its events carry objects of type T.
	Watch(ctx context.Context, opts ...client.ListOption) (client.Watcher, error)
}

// ClientListWatch is a ListerWatcher backed by a client.Client for a typed
// kind whose list type is registered in the client's scheme.
type ClientListWatch[T api.Object] struct {
	c       *client.Client
	gvk     api.GroupVersionKind
	listGVK api.GroupVersionKind
}

// NewClientListWatch returns a ListerWatcher for T (a pointer to a registered
// struct such as *corev1.ConfigMap; its list kind must be registered too).
func NewClientListWatch[T api.Object](c *client.Client) (*ClientListWatch[T], error) {
	var zero T
	rt := reflect.TypeOf(zero)
	if rt == nil || rt.Kind() != reflect.Pointer || rt.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("cache: %T is not a pointer to a struct", zero)
	}
	gvk, err := c.GroupVersionKindFor(reflect.New(rt.Elem()).Interface())
	if err != nil {
		return nil, fmt.Errorf("cache: kind of %s: %w", rt, err)
	}
	lw := &ClientListWatch[T]{c: c, gvk: gvk, listGVK: gvk}
	lw.listGVK.Kind += "List"
	if _, err := lw.newList(); err != nil {
		return nil, err
	}
	return lw, nil
}

// GroupVersionKind returns the kind of T.
func (lw *ClientListWatch[T]) GroupVersionKind() api.GroupVersionKind { return lw.gvk }

func (lw *ClientListWatch[T]) newList() (any, error) {
	l, err := lw.c.Scheme().NewList(lw.listGVK)
	if err != nil {
		return nil, fmt.Errorf("cache: list type of %s: %w", lw.gvk.Kind, err)
	}
	return l, nil
}

// List implements ListerWatcher.
func (lw *ClientListWatch[T]) List(ctx context.Context, opts ...client.ListOption) ([]T, string, error) {
	l, err := lw.newList()
	if err != nil {
		return nil, "", err
	}
	if err := lw.c.List(ctx, l, opts...); err != nil {
		return nil, "", fmt.Errorf("list %s: %w", lw.gvk.Kind, err)
	}
	return extractList[T](l)
}

// Watch implements ListerWatcher.
func (lw *ClientListWatch[T]) Watch(ctx context.Context, opts ...client.ListOption) (client.Watcher, error) {
	l, err := lw.newList()
	if err != nil {
		return nil, err
	}
	w, err := lw.c.Watch(ctx, l, opts...)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", lw.gvk.Kind, err)
	}
	return w, nil
}

// extractList reads Items and ListMeta.ResourceVersion of a typed list struct.
func extractList[T api.Object](list any) ([]T, string, error) {
	v := reflect.ValueOf(list)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, "", fmt.Errorf("cache: list %T is not a pointer to a struct", list)
	}
	v = v.Elem()
	items := v.FieldByName("Items")
	if !items.IsValid() || items.Kind() != reflect.Slice {
		return nil, "", fmt.Errorf("cache: list %T has no Items slice", list)
	}
	var rv string
	if f := v.FieldByName("ListMeta"); f.IsValid() {
		if lm, ok := f.Interface().(api.ListMeta); ok {
			rv = lm.ResourceVersion
		}
	}
	// Each item gets its own allocation: pointers into the list's backing array
	// would keep the whole array (and its spare capacity) alive for as long as any
	// one item stays cached. The Reflector interns the items (interner).
	out := make([]T, 0, items.Len())
	elem := items.Type().Elem()
	for i := range items.Len() {
		p := reflect.New(elem)
		p.Elem().Set(items.Index(i))
		obj, ok := p.Interface().(T)
		if !ok {
			return nil, "", fmt.Errorf("cache: item of %T is not a %s", list,
				strings.TrimPrefix(fmt.Sprintf("%T", *new(T)), "*"))
		}
		out = append(out, obj)
	}
	items.Set(reflect.MakeSlice(items.Type(), 0, 0))
	return out, rv, nil
}
