package fakeclient

import (
	"context"
	"reflect"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// Lister reads the objects of one kind from a Client like cache.Lister: Get
// and List returning objects (here fresh copies, as nothing shares them).
type Lister[T api.Object] struct{ c *Client }

// ListerOf returns a Lister of T's kind over c.
func ListerOf[T api.Object](c *Client) *Lister[T] { return &Lister[T]{c: c} }

// Get returns the object named key, or a NotFound StatusError.
func (l *Lister[T]) Get(ctx context.Context, key client.ObjectKey) (T, error) {
	obj := newObject[T]()
	if err := l.c.Get(ctx, key, obj); err != nil {
		var zero T
		return zero, err
	}
	return obj, nil
}

// List returns the objects that match opts, in key order.
func (l *Lister[T]) List(ctx context.Context, opts ...client.ListOption) ([]T, error) {
	gvk, err := l.c.scheme.ObjectKinds(newObject[T]())
	if err != nil {
		return nil, err
	}
	list := &api.UnstructuredList{APIVersion: gvk.APIVersion(), Kind: gvk.Kind + "List"}
	if err := l.c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	out := make([]T, 0, len(list.Items))
	for i := range list.Items {
		obj := newObject[T]()
		b, err := list.Items[i].MarshalJSON()
		if err == nil {
			err = decode(b, obj)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// newObject returns a new *X for T = *X.
func newObject[T api.Object]() T {
	var zero T
	return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(T)
}
