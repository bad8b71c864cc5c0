package namespace

import (
	"context"
	"fmt"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/manager"
)

// Name is the controller's name.
const Name = "namespace"

// Setup adds the namespace lifecycle controller to mgr.
func Setup(mgr *manager.Manager) error {
	c := mgr.Client()
	rec := mgr.EventRecorder("namespace-controller")
	r := &reconciler{
		get: func(ctx context.Context, name string) (*corev1.Namespace, error) {
			ns := &corev1.Namespace{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
				return nil, err
			}
			return ns, nil
		},
		updateStatus: func(ctx context.Context, ns *corev1.Namespace) error { return c.Status().Update(ctx, ns) },
		finalize: func(ctx context.Context, ns *corev1.Namespace) error {
			return c.SubResource("finalize").Update(ctx, ns, ns)
		},
		discover: func(ctx context.Context) ([]resource, error) {
			return discoverResources(ctx, c.REST(), "list", "delete")
		},
		deleteCollection: func(ctx context.Context, res resource, ns string) error {
			return c.DeleteAllOf(ctx, emptyObject(res), client.InNamespace(ns),
				client.PropagationPolicy(api.DeletePropagationBackground))
		},
		list: func(ctx context.Context, res resource, ns string) ([]api.Unstructured, error) {
			l := &api.UnstructuredList{APIVersion: res.GVK().APIVersion(), Kind: res.Kind + "List"}
			if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
				return nil, err
			}
			return l.Items, nil
		},
		deleteObject: func(ctx context.Context, obj *api.Unstructured) error {
			uid := obj.GetUID()
			return c.Delete(ctx, obj, client.PropagationPolicy(api.DeletePropagationBackground), client.Preconditions{UID: &uid})
		},
		event:        rec.Event,
		requeueAfter: 2 * time.Second,
	}
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(builder.Kind[*corev1.Namespace]()).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	return nil
}

// emptyObject names the collection of res.
func emptyObject(res resource) *api.Unstructured {
	u := &api.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(res.GVK())
	return u
}
