package volumebinder

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Finalizers that keep storage objects in use from going away, as
// Kubernetes' storage object in-use protection does.
const (
	// FinalizerPVCProtection holds a deleted claim while a pod uses it.
	FinalizerPVCProtection = "kubernetes.io/pvc-protection"
	// FinalizerPVProtection holds a deleted volume while it is Bound.
	FinalizerPVProtection = "kubernetes.io/pv-protection"
)

// inUseRecheck is when a deleted claim still in use is looked at again
// (pod events also bring it back sooner).
const inUseRecheck = 10 * time.Second

// releaseClaim removes the protection finalizer of a deleted claim once no
// pod uses it: no scheduled pod that has not finished names it (Kubernetes'
// rule). The pods are listed from the API server, not the cache, so that a
// pod just scheduled is seen.
func (r *reconciler) releaseClaim(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(pvc, FinalizerPVCProtection) {
		return reconcile.Result{}, nil
	}
	pods := &corev1.PodList{}
	if err := r.direct.List(ctx, pods, client.InNamespace(pvc.Namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("list pods using claim %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed &&
			slices.Contains(claimNames(p), pvc.Name) {
			return reconcile.Result{RequeueAfter: inUseRecheck}, nil
		}
	}
	controllerutil.RemoveFinalizer(pvc, FinalizerPVCProtection)
	if err := r.client.Update(ctx, pvc); err != nil {
		return reconcile.Result{}, fmt.Errorf("remove finalizer of claim %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	return reconcile.Result{}, nil
}
