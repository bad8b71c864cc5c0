package volumebinder

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/reconcile"
)

// phaseReconciler keeps PersistentVolume objects as Kubernetes' volume
// controller does: their protection finalizer (released once a deleted
// volume is no longer Bound), their phase (Available, Bound, Released) and
// the reclaim of a Released volume by its reclaim policy.
type phaseReconciler struct {
	reader   reader
	client   writer
	recorder recorder
	now      func() time.Time
}

var _ reconcile.Reconciler = (*phaseReconciler)(nil)

// Event reasons of reclaim, as Kubernetes words them.
const (
	reasonVolumeFailedDelete  = "VolumeFailedDelete"
	reasonVolumeFailedRecycle = "VolumeFailedRecycle"
)

// AnnProvisionedBy names the provisioner of a dynamically provisioned
// volume; such a volume is deleted by its provisioner.
const AnnProvisionedBy = "pv.kubernetes.io/provisioned-by"

// volumePhase is the phase a volume should have given its claim (nil: the
// claim named by spec.claimRef does not exist), and whether the volume must
// be unbound: the controller bound it to a claim that got another volume.
func volumePhase(pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) (corev1.PersistentVolumePhase, bool) {
	ref := pv.Spec.ClaimRef
	switch {
	case pv.Status.Phase == corev1.VolumeFailed:
		return corev1.VolumeFailed, false
	case ref == nil:
		return corev1.VolumeAvailable, false
	case ref.UID == "":
		// Pre-bound to a claim that is not bound to it (yet).
		return corev1.VolumeAvailable, false
	case pvc == nil || ref.UID != pvc.UID:
		return corev1.VolumeReleased, false
	case pvc.Spec.VolumeName == pv.Name || pvc.Spec.VolumeName == "":
		// Bound, or being bound (the claim's side follows).
		return corev1.VolumeBound, false
	default:
		// The claim is bound to another volume.
		return corev1.VolumeAvailable, pv.Annotations[AnnBoundByController] == "yes"
	}
}

// Reconcile keeps the volume's finalizer and phase (with
// lastPhaseTransitionTime) and reclaims it once Released.
func (r *phaseReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pv := &corev1.PersistentVolume{}
	err := r.reader.Get(ctx, req.ObjectKey, pv)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get volume %s: %w", req.Name, err)
	}
	deleting := pv.DeletionTimestamp != nil
	if !deleting && controllerutil.AddFinalizer(pv, FinalizerPVProtection) {
		if err := r.client.Update(ctx, pv); err != nil {
			return reconcile.Result{}, fmt.Errorf("add finalizer to volume %s: %w", pv.Name, err)
		}
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
	phase, unbind := volumePhase(pv, pvc)
	if unbind && !deleting {
		pv.Spec.ClaimRef = nil
		delete(pv.Annotations, AnnBoundByController)
		if err := r.client.Update(ctx, pv); err != nil {
			return reconcile.Result{}, fmt.Errorf("unbind volume %s: %w", pv.Name, err)
		}
	}
	if phase != pv.Status.Phase {
		if err := r.setPhase(ctx, pv, phase, ""); err != nil {
			return reconcile.Result{}, err
		}
	}
	switch {
	case deleting:
		// A deleted volume goes once it is no longer Bound.
		if phase != corev1.VolumeBound && controllerutil.RemoveFinalizer(pv, FinalizerPVProtection) {
			if err := r.client.Update(ctx, pv); err != nil {
				return reconcile.Result{}, fmt.Errorf("remove finalizer of volume %s: %w", pv.Name, err)
			}
		}
	case phase == corev1.VolumeReleased:
		return reconcile.Result{}, r.reclaim(ctx, pv)
	}
	return reconcile.Result{}, nil
}

// setPhase writes the volume's phase and message.
func (r *phaseReconciler) setPhase(ctx context.Context, pv *corev1.PersistentVolume, phase corev1.PersistentVolumePhase, msg string) error {
	pv.Status.Phase, pv.Status.Message, pv.Status.Reason = phase, msg, ""
	pv.Status.LastPhaseTransitionTime = &api.Time{Time: r.now().Truncate(time.Second)}
	if err := r.client.Status().Update(ctx, pv); err != nil {
		return fmt.Errorf("set phase of volume %s to %s: %w", pv.Name, phase, err)
	}
	return nil
}

// hostPathDeletable is the only hostPath Kubernetes' hostPath deleter
// removes: a directory under /tmp.
var hostPathDeletable = regexp.MustCompile("/tmp/.+")

// reclaim applies the Released volume's reclaim policy as Kubernetes does
// for volumes that no provisioner of this platform created. Retain keeps the
// volume Released with its claimRef (an administrator reclaims it). Delete
// deletes a hostPath volume under /tmp (the object only: the directory is
// left on its node, since the control plane does not reach into nodes) and
// leaves a volume of an external provisioner (annotated
// pv.kubernetes.io/provisioned-by, or CSI) to it; any other volume becomes
// Failed with Kubernetes' message and a VolumeFailedDelete warning. Recycle,
// deprecated, is not run: the volume becomes Failed with a
// VolumeFailedRecycle warning.
func (r *phaseReconciler) reclaim(ctx context.Context, pv *corev1.PersistentVolume) error {
	switch pv.Spec.PersistentVolumeReclaimPolicy {
	case corev1.PersistentVolumeReclaimDelete:
		switch {
		case pv.Annotations[AnnProvisionedBy] != "" || pv.Spec.CSI != nil:
			return nil
		case pv.Spec.HostPath != nil && hostPathDeletable.MatchString(pv.Spec.HostPath.Path):
			if err := r.client.Delete(ctx, pv); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete released volume %s: %w", pv.Name, err)
			}
			logr.FromContextOrDiscard(ctx).Info("Deleted released volume", "volume", pv.Name)
			return nil
		case pv.Spec.HostPath != nil:
			return r.fail(ctx, pv, reasonVolumeFailedDelete,
				"host_path deleter only supports /tmp/.+ but received provided "+pv.Spec.HostPath.Path)
		default:
			return r.fail(ctx, pv, reasonVolumeFailedDelete,
				fmt.Sprintf("error getting deleter volume plugin for volume %q: no deletable volume plugin matched", pv.Name))
		}
	case corev1.PersistentVolumeReclaimRecycle:
		return r.fail(ctx, pv, reasonVolumeFailedRecycle,
			"No recycler plugin found for the volume! (Recycle is deprecated and not supported: use Retain, or Delete)")
	}
	return nil
}

// fail sets the volume Failed with msg and records a warning.
func (r *phaseReconciler) fail(ctx context.Context, pv *corev1.PersistentVolume, reason, msg string) error {
	if err := r.setPhase(ctx, pv, corev1.VolumeFailed, msg); err != nil {
		return err
	}
	r.recorder.Event(ctx, pv, "Warning", reason, msg)
	return nil
}
