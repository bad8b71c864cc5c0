package volumebinder

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	storagev1 "github.com/converge-dev/converge/builtin/api/storage/v1"
	"github.com/converge-dev/converge/builtin/volumematch"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// Event reasons of static binding, as Kubernetes' volume controller words
// them.
const (
	reasonFailedBinding  = "FailedBinding"
	reasonVolumeMismatch = "VolumeMismatch"
	reasonClaimLost      = "ClaimLost"
	reasonClaimMisbound  = "ClaimMisbound"

	reasonExternalProvisioning = "ExternalProvisioning"
)

// NoProvisioner is the provisioner of classes of pre-created volumes only
// (local volumes): their claims are never given a local directory volume.
const NoProvisioner = volumematch.NoProvisioner

// bindStatic binds the pending claim pvc to the best PersistentVolume that
// satisfies it; at once, or for a class with volumeBindingMode
// WaitForFirstConsumer once a pod using the claim is scheduled (then the
// volume's node affinity must admit that node). handled is false when no
// volume satisfies the claim and it may get a local directory volume
// instead; a claim with storageClassName "" never does (it waits for a
// volume, as in Kubernetes), nor does one of a class whose provisioner is
// kubernetes.io/no-provisioner.
func (r *reconciler) bindStatic(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (handled bool, err error) {
	class, err := r.claimClass(ctx, pvc)
	if err != nil {
		return false, err
	}
	var node *corev1.Node
	staticOnly := false
	if class != "" {
		sc := &storagev1.StorageClass{}
		err := r.reader.Get(ctx, client.ObjectKey{Name: class}, sc)
		if apierrors.IsNotFound(err) {
			// A class created a moment ago may not be in the cache yet: a
			// no-provisioner class taken for an unknown one would get its
			// claim a local directory volume.
			err = r.direct.Get(ctx, client.ObjectKey{Name: class}, sc)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("get storage class %q of claim %s/%s: %w", class, pvc.Namespace, pvc.Name, err)
		}
		staticOnly = err == nil && sc.Provisioner == NoProvisioner
		if err == nil && sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
			name := pvc.Annotations[AnnSelectedNode]
			if name == "" {
				if name, err = r.firstConsumerNode(ctx, pvc); err != nil || name == "" {
					return true, err
				}
			}
			node = &corev1.Node{}
			if err := r.direct.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
				if !apierrors.IsNotFound(err) {
					return false, fmt.Errorf("get node %q of claim %s/%s: %w", name, pvc.Namespace, pvc.Name, err)
				}
				node = &corev1.Node{ObjectMeta: api.ObjectMeta{Name: name}}
			}
		}
	}
	pvs := &corev1.PersistentVolumeList{}
	if err := r.reader.List(ctx, pvs); err != nil {
		return false, fmt.Errorf("list volumes for claim %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	candidates := make([]*corev1.PersistentVolume, len(pvs.Items))
	for i := range pvs.Items {
		candidates[i] = &pvs.Items[i]
	}
	if pv := volumematch.Best(pvc, candidates, class, node); pv != nil {
		return true, r.bind(ctx, pv, pvc, true)
	}
	switch {
	case pvc.Spec.StorageClassName != nil && *pvc.Spec.StorageClassName == "":
		r.recorder.Event(ctx, pvc, "Normal", reasonFailedBinding, "no persistent volumes available for this claim and no storage class is set")
		return true, nil
	case staticOnly:
		r.recorder.Event(ctx, pvc, "Normal", reasonExternalProvisioning, fmt.Sprintf("Waiting for a volume to be created either by the external "+
			"provisioner '%s' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running "+
			"and correctly registered.", NoProvisioner))
		return true, nil
	}
	return false, nil
}

// claimClass returns the claim's storage class. A claim without one gets
// the default class (the newest StorageClass annotated
// storageclass.kubernetes.io/is-default-class=true), written into its spec as
// Kubernetes' retroactive default storage class assignment does; without a
// default class it is "" (volumes without a class).
func (r *reconciler) claimClass(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (string, error) {
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName, nil
	}
	classes := &storagev1.StorageClassList{}
	if err := r.reader.List(ctx, classes); err != nil {
		return "", fmt.Errorf("list storage classes for claim %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	def := storagev1.DefaultClass(classes.Items)
	if def == nil {
		return "", nil
	}
	pvc.Spec.StorageClassName = &def.Name
	if err := r.client.Update(ctx, pvc); err != nil {
		return "", fmt.Errorf("set default storage class %q on claim %s/%s: %w", def.Name, pvc.Namespace, pvc.Name, err)
	}
	return def.Name, nil
}

// syncPreBound handles a claim whose spec.volumeName names a
// PersistentVolume: pre-bound by its author, or bound by this controller. It
// completes the binding when the volume is free (and satisfies the claim) or
// already bound to the claim; a bound claim whose volume is gone, or bound
// to another claim, is Lost.
func (r *reconciler) syncPreBound(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	byController := pvc.Annotations[AnnBoundByController] == "yes"
	wasBound := pvc.Status.Phase == corev1.ClaimBound || pvc.Annotations[AnnBindCompleted] == "yes"
	pv := &corev1.PersistentVolume{}
	err := r.reader.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv)
	switch {
	case apierrors.IsNotFound(err):
		if wasBound {
			return r.claimLost(ctx, pvc, reasonClaimLost, "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
		}
		r.recorder.Event(ctx, pvc, "Normal", reasonFailedBinding, fmt.Sprintf("volume %q not found", pvc.Spec.VolumeName))
		return nil
	case err != nil:
		return fmt.Errorf("get volume %s of claim %s/%s: %w", pvc.Spec.VolumeName, pvc.Namespace, pvc.Name, err)
	case volumematch.BoundTo(pv, pvc):
		return r.bind(ctx, pv, pvc, byController)
	case pv.Spec.ClaimRef == nil:
		class := ""
		if pvc.Spec.StorageClassName != nil {
			class = *pvc.Spec.StorageClassName
		}
		if msg := volumematch.Mismatch(pv, pvc, class, nil); msg != "" {
			r.recorder.Event(ctx, pvc, "Warning", reasonVolumeMismatch, fmt.Sprintf("Cannot bind to requested volume %q: %s", pv.Name, msg))
			return nil
		}
		return r.bind(ctx, pv, pvc, byController)
	case wasBound && byController:
		return r.claimLost(ctx, pvc, reasonClaimMisbound, "Two claims are bound to the same volume, this one is bound incorrectly")
	default:
		r.recorder.Event(ctx, pvc, "Warning", reasonFailedBinding, fmt.Sprintf("volume %q already bound to a different claim.", pv.Name))
		return nil
	}
}

// claimLost sets the claim's phase Lost with a warning.
func (r *reconciler) claimLost(ctx context.Context, pvc *corev1.PersistentVolumeClaim, reason, msg string) error {
	if pvc.Status.Phase == corev1.ClaimLost {
		return nil
	}
	pvc.Status.Phase = corev1.ClaimLost
	if err := r.client.Status().Update(ctx, pvc); err != nil {
		return fmt.Errorf("set claim %s/%s Lost: %w", pvc.Namespace, pvc.Name, err)
	}
	r.recorder.Event(ctx, pvc, "Warning", reason, msg)
	return nil
}

// bind writes both sides of the binding of pv and pvc, in Kubernetes'
// order: the volume's claimRef (with the claim's uid; annotated
// bound-by-controller when the volume was not pre-bound), the volume's
// phase Bound, the claim's volumeName and annotations (bind-completed;
// bound-by-controller when byController: the controller chose the volume),
// then the claim's phase Bound with the volume's capacity and access modes.
// Each write carries the resourceVersion read, so of two claims racing for
// one volume only one gets it; the other's write fails with a Conflict and
// it is reconciled again.
func (r *reconciler) bind(ctx context.Context, pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim, byController bool) error {
	ref := &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name,
		UID: pvc.UID, ResourceVersion: pvc.ResourceVersion}
	if old := pv.Spec.ClaimRef; old == nil || old.UID != pvc.UID || old.Kind != ref.Kind || old.APIVersion != ref.APIVersion {
		if old == nil {
			setAnnotation(&pv.ObjectMeta, AnnBoundByController)
		}
		pv.Spec.ClaimRef = ref
		if err := r.client.Update(ctx, pv); err != nil {
			return fmt.Errorf("bind volume %s to claim %s/%s: %w", pv.Name, pvc.Namespace, pvc.Name, err)
		}
	}
	if pv.Status.Phase != corev1.VolumeBound {
		pv.Status.Phase = corev1.VolumeBound
		pv.Status.Reason, pv.Status.Message = "", ""
		pv.Status.LastPhaseTransitionTime = &api.Time{Time: time.Now().Truncate(time.Second)}
		if err := r.client.Status().Update(ctx, pv); err != nil {
			return fmt.Errorf("set volume %s Bound: %w", pv.Name, err)
		}
	}
	if pvc.Spec.VolumeName != pv.Name || pvc.Annotations[AnnBindCompleted] != "yes" || byController && pvc.Annotations[AnnBoundByController] != "yes" {
		pvc.Spec.VolumeName = pv.Name
		setAnnotation(&pvc.ObjectMeta, AnnBindCompleted)
		if byController {
			setAnnotation(&pvc.ObjectMeta, AnnBoundByController)
		}
		if err := r.client.Update(ctx, pvc); err != nil {
			return fmt.Errorf("bind claim %s/%s to volume %s: %w", pvc.Namespace, pvc.Name, pv.Name, err)
		}
	}
	capacity := corev1.ResourceList{}
	if q, ok := volumematch.StorageOf(pv.Spec.Capacity); ok {
		capacity[string(corev1.ResourceStorage)] = q
	}
	if pvc.Status.Phase != corev1.ClaimBound || !slices.Equal(pvc.Status.AccessModes, pv.Spec.AccessModes) ||
		!sameQuantities(pvc.Status.Capacity, capacity) {
		pvc.Status.Phase = corev1.ClaimBound
		pvc.Status.AccessModes = slices.Clone(pv.Spec.AccessModes)
		pvc.Status.Capacity = capacity
		if err := r.client.Status().Update(ctx, pvc); err != nil {
			return fmt.Errorf("set claim %s/%s Bound: %w", pvc.Namespace, pvc.Name, err)
		}
		logr.FromContextOrDiscard(ctx).Info("Bound claim", "claim", pvc.Namespace+"/"+pvc.Name, "volume", pv.Name)
	}
	return nil
}

// setAnnotation sets annotation key to "yes".
func setAnnotation(m *api.ObjectMeta, key string) {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[key] = "yes"
}

// sameQuantities compares resource lists by value.
func sameQuantities(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		o, ok := b[k]
		if !ok || q.Cmp(o) != 0 {
			return false
		}
	}
	return true
}

// LocalPathProvisioner is the provisioner of the StorageClass `converge up`
// creates as the cluster's default (DefaultClass): claims of it get a local
// directory volume on the node of their first consumer.
const LocalPathProvisioner = "converge.dev/local-path"

// DefaultClass is the default StorageClass a control plane bootstraps, as
// k3s ships local-path: claims without a class get it (DefaultStorageClass
// admission), are bound when their first pod is scheduled, and their volume
// is deleted with them.
func DefaultClass() *storagev1.StorageClass {
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	reclaim := corev1.PersistentVolumeReclaimDelete
	sc := &storagev1.StorageClass{Provisioner: LocalPathProvisioner, VolumeBindingMode: &mode, ReclaimPolicy: &reclaim}
	sc.APIVersion, sc.Kind = "storage.k8s.io/v1", "StorageClass"
	sc.Name = "local-path"
	sc.Annotations = map[string]string{storagev1.AnnIsDefaultClass: "true"}
	return sc
}
