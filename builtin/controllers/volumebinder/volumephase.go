package volumebinder

import (
	"context"
	"fmt"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

// phaseReconciler keeps the phase of PersistentVolume objects as Kubernetes'
// volume controller would for volumes it cannot bind or reclaim itself:
// Available while no claim holds the volume, Bound while the claim named by
// spec.claimRef names the volume in its spec.volumeName, Released once that
// claim is gone. It binds no claim to a volume and deletes no storage.
type phaseReconciler struct {
	reader reader
	client writer
	now    func() time.Time
}

var _ reconcile.Reconciler = (*phaseReconciler)(nil)

// volumePhase is the phase a volume should have given its claim (nil: the
// claim named by spec.claimRef does not exist).
func volumePhase(pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) corev1.PersistentVolumePhase {
	ref := pv.Spec.ClaimRef
	switch {
	case pv.Status.Phase == corev1.VolumeFailed:
		return corev1.VolumeFailed
	case ref == nil:
		return corev1.VolumeAvailable
	case pvc == nil || (ref.UID != "" && ref.UID != pvc.UID):
		if ref.UID == "" {
			// Pre-bound to a claim that does not exist yet.
			return corev1.VolumeAvailable
		}
		return corev1.VolumeReleased
	case pvc.Spec.VolumeName == pv.Name:
		return corev1.VolumeBound
	default:
		// Pre-bound to a claim that is not bound to it (yet).
		return corev1.VolumeAvailable
	}
}

// Reconcile sets the volume's phase (and lastPhaseTransitionTime) when it
// changed.
func (r *phaseReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pv := &corev1.PersistentVolume{}
	err := r.reader.Get(ctx, req.ObjectKey, pv)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get volume %s: %w", req.Name, err)
	}
	if pv.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	var pvc *corev1.PersistentVolumeClaim
	if ref := pv.Spec.ClaimRef; ref != nil {
		c := &corev1.PersistentVolumeClaim{}
		err := r.reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, c)
		switch {
		case err == nil:
			pvc = c
		case !apierrors.IsNotFound(err):
			return reconcile.Result{}, fmt.Errorf("get claim %s/%s of volume %s: %w", ref.Namespace, ref.Name, pv.Name, err)
		}
	}
	phase := volumePhase(pv, pvc)
	if phase == pv.Status.Phase {
		return reconcile.Result{}, nil
	}
	pv.Status.Phase = phase
	pv.Status.LastPhaseTransitionTime = &api.Time{Time: r.now().Truncate(time.Second)}
	if err := r.client.Status().Update(ctx, pv); err != nil {
		return reconcile.Result{}, fmt.Errorf("update phase of volume %s: %w", pv.Name, err)
	}
	return reconcile.Result{}, nil
}
