package volumebinder

import (
	"context"
	"fmt"
	"time"

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
	r := &reconciler{
		reader:   mgr.Reader(),
		client:   mgr.Client(),
		recorder: mgr.EventRecorder("persistentvolume-controller"),
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
	// A claim event enqueues the volume it names, so a volume follows its
	// claim's binding and deletion.
	toVolume := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj api.Object) []reconcile.Request {
		pvc, ok := obj.(*corev1.PersistentVolumeClaim)
		if !ok || pvc.Spec.VolumeName == "" {
			return nil
		}
		return []reconcile.Request{{ObjectKey: client.ObjectKey{Name: pvc.Spec.VolumeName}}}
	})
	err = builder.ControllerManagedBy(mgr).
		Named(Name+"-volumes").
		For(builder.Kind[*corev1.PersistentVolume]()).
		Watches(builder.Kind[*corev1.PersistentVolumeClaim](), toVolume).
		Complete(&phaseReconciler{reader: mgr.Reader(), client: mgr.Client(), now: time.Now})
	if err != nil {
		return fmt.Errorf("%s volumes: %w", Name, err)
	}
	return nil
}
