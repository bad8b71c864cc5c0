package volumebinder

import (
	"context"
	"fmt"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	storagev1 "github.com/converge-dev/converge/builtin/api/storage/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Name is the controller's name.
const Name = "volumebinder"

// Setup adds the volume binder to mgr. It reconciles claims: a pod event
// enqueues the claims the pod uses, a volume event the claim its claimRef
// names and, for a volume without one, every unbound claim, and a storage
// class event every unbound claim. A second controller reconciles volumes:
// a claim event enqueues the volume it names.
func Setup(mgr *manager.Manager) error {
	cached := mgr.Reader()
	r := &reconciler{
		reader:   cached,
		direct:   mgr.Client(),
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
	unbound := func(ctx context.Context) []reconcile.Request {
		claims := &corev1.PersistentVolumeClaimList{}
		if err := cached.List(ctx, claims); err != nil {
			return nil
		}
		var out []reconcile.Request
		for i := range claims.Items {
			if c := &claims.Items[i]; c.Status.Phase != corev1.ClaimBound && c.DeletionTimestamp == nil {
				out = append(out, reconcile.Request{ObjectKey: client.ObjectKey{Namespace: c.Namespace, Name: c.Name}})
			}
		}
		return out
	}
	volumeToClaims := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj api.Object) []reconcile.Request {
		pv, ok := obj.(*corev1.PersistentVolume)
		if !ok {
			return nil
		}
		if ref := pv.Spec.ClaimRef; ref != nil && ref.UID != "" {
			return []reconcile.Request{{ObjectKey: client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}}}
		}
		return unbound(ctx)
	})
	classToClaims := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ api.Object) []reconcile.Request {
		return unbound(ctx)
	})
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(builder.Kind[*corev1.PersistentVolumeClaim]()).
		Watches(builder.Kind[*corev1.Pod](), toClaims).
		Watches(builder.Kind[*corev1.PersistentVolume](), volumeToClaims).
		Watches(builder.Kind[*storagev1.StorageClass](), classToClaims).
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
		Complete(&phaseReconciler{reader: cached, client: mgr.Client(), recorder: r.recorder, now: time.Now})
	if err != nil {
		return fmt.Errorf("%s volumes: %w", Name, err)
	}
	return nil
}
