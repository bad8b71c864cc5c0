package volumebinder

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Name is the controller's name.
const Name = "volumebinder"

// Setup adds the volume binder to mgr. It reconciles claims; a pod event
// enqueues the claims the pod uses.
func Setup(mgr *manager.Manager) error {
	c := mgr.Client()
	rec := mgr.EventRecorder("persistentvolume-controller")
	r := &reconciler{
		getClaim: func(ctx context.Context, key client.ObjectKey) (*corev1.PersistentVolumeClaim, error) {
			pvc := &corev1.PersistentVolumeClaim{}
			if err := c.Get(ctx, key, pvc); err != nil {
				return nil, err
			}
			return pvc, nil
		},
		listPods: func(ctx context.Context, ns string) ([]corev1.Pod, error) {
			l := &corev1.PodList{}
			if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
				return nil, err
			}
			return l.Items, nil
		},
		update:       func(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error { return c.Update(ctx, pvc) },
		updateStatus: func(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error { return c.Status().Update(ctx, pvc) },
		event:        rec.Event,
	}
	toClaims := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj api.Object) []reconcile.Request {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Spec.NodeName == "" {
			return nil
		}
		var out []reconcile.Request
		for _, name := range claimNames(pod) {
			out = append(out, reconcile.Request{ObjectKey: client.ObjectKey{Namespace: pod.Namespace, Name: name}})
		}
		return out
	})
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(builder.Kind[*corev1.PersistentVolumeClaim]()).
		Watches(builder.Kind[*corev1.Pod](), toClaims).
		Complete(r)
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	return nil
}
