package volumebinder

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Annotations of a bound claim, as Kubernetes' scheduler and binder set them.
const (
	// AnnSelectedNode names the node the claim's volume lives on.
	AnnSelectedNode = "volume.kubernetes.io/selected-node"
	// AnnBindCompleted marks a claim whose binding is complete.
	AnnBindCompleted = "pv.kubernetes.io/bind-completed"
	// AnnBoundByController marks a claim bound by a controller.
	AnnBoundByController = "pv.kubernetes.io/bound-by-controller"
)

// Event reasons.
const (
	reasonWaitForFirstConsumer = "WaitForFirstConsumer"
	reasonProvisioningFailed   = "ProvisioningFailed"
	reasonProvisioned          = "ProvisioningSucceeded"
)

// VolumeName is the name of the volume a claim with uid is bound to.
func VolumeName(uid string) string { return "pvc-" + uid }

// reader reads claims, pods and volumes from the informer cache
// (manager.Reader), and storage classes and nodes from the API server
// (client.Client).
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

// writer writes claims, volumes and their status (client.Client).
type writer interface {
	Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error
	Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error
	Status() client.StatusWriter
}

// recorder records events (record.Recorder).
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// reconciler binds claims. A claim read from a stale cache fails its update
// with a Conflict and is reconciled again.
type reconciler struct {
	reader reader
	// direct reads past the cache: nodes, which have no informer here, and a
	// storage class the cache does not have yet.
	direct   reader
	client   writer
	recorder recorder
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile keeps the claim's protection finalizer (and lets a deleted claim
// go once no pod uses it), binds a pending claim to a PersistentVolume that
// satisfies it, or else to a local directory volume on the node of its first
// scheduled consumer, and completes or checks the binding of a claim whose
// spec.volumeName is set.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	err := r.reader.Get(ctx, req.ObjectKey, pvc)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get claim %s: %w", req.ObjectKey, err)
	}
	if pvc.DeletionTimestamp != nil {
		return r.releaseClaim(ctx, pvc)
	}
	if controllerutil.AddFinalizer(pvc, FinalizerPVCProtection) {
		if err := r.client.Update(ctx, pvc); err != nil {
			return reconcile.Result{}, fmt.Errorf("add finalizer to claim %s: %w", req.ObjectKey, err)
		}
	}
	switch {
	case pvc.Spec.VolumeName != "" && pvc.Spec.VolumeName != VolumeName(pvc.UID):
		return reconcile.Result{}, r.syncPreBound(ctx, pvc)
	case pvc.Spec.VolumeName == "":
		bound, err := r.bindStatic(ctx, pvc)
		if err != nil || bound {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, r.provisionLocal(ctx, pvc)
}

// provisionLocal binds the claim to a local directory volume on the node of
// its first scheduled consumer, if it is not bound yet.
func (r *reconciler) provisionLocal(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	key := client.ObjectKeyFromObject(pvc)
	node := pvc.Annotations[AnnSelectedNode]
	if node != "" && pvc.Status.Phase == corev1.ClaimBound {
		return nil
	}
	if node == "" {
		var err error
		node, err = r.firstConsumerNode(ctx, pvc)
		if err != nil || node == "" {
			return err
		}
		if msg := unsupported(pvc); msg != "" {
			r.recorder.Event(ctx, pvc, "Warning", reasonProvisioningFailed, msg)
			return nil
		}
	}
	vol := VolumeName(pvc.UID)
	if pvc.Annotations[AnnSelectedNode] != node || pvc.Spec.VolumeName != vol || pvc.Annotations[AnnBindCompleted] != "yes" {
		if pvc.Annotations == nil {
			pvc.Annotations = map[string]string{}
		}
		pvc.Annotations[AnnSelectedNode] = node
		pvc.Annotations[AnnBindCompleted] = "yes"
		pvc.Annotations[AnnBoundByController] = "yes"
		pvc.Spec.VolumeName = vol
		if err := r.client.Update(ctx, pvc); err != nil {
			return fmt.Errorf("bind claim %s: %w", key, err)
		}
	}
	pvc.Status.Phase = corev1.ClaimBound
	pvc.Status.AccessModes = pvc.Spec.AccessModes
	pvc.Status.Capacity = corev1.ResourceList{}
	if q, ok := pvc.Spec.Resources.Requests[string(corev1.ResourceStorage)]; ok {
		pvc.Status.Capacity[string(corev1.ResourceStorage)] = q
	}
	if err := r.client.Status().Update(ctx, pvc); err != nil {
		return fmt.Errorf("update status of claim %s: %w", key, err)
	}
	logr.FromContextOrDiscard(ctx).Info("Bound claim", "claim", key.String(), "volume", vol, "node", node)
	r.recorder.Event(ctx, pvc, "Normal", reasonProvisioned,
		fmt.Sprintf("Successfully provisioned volume %s on node %s", vol, node))
	return nil
}

// firstConsumerNode returns the node of the claim's first scheduled
// consumer; "" (with a WaitForFirstConsumer event) when there is none.
func (r *reconciler) firstConsumerNode(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (string, error) {
	pods := &corev1.PodList{}
	if err := r.reader.List(ctx, pods, client.InNamespace(pvc.Namespace)); err != nil {
		return "", fmt.Errorf("list pods of %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	node := consumerNode(pods.Items, pvc.Name)
	if node == "" {
		r.recorder.Event(ctx, pvc, "Normal", reasonWaitForFirstConsumer,
			"waiting for first consumer to be created before binding")
	}
	return node, nil
}

// unsupported says why the claim cannot get a local directory volume, or "".
func unsupported(pvc *corev1.PersistentVolumeClaim) string {
	switch {
	case pvc.Spec.Selector != nil:
		return "claim.Spec.Selector is not supported for dynamic provisioning: volumes are provisioned as local directories"
	case pvc.Spec.VolumeMode != nil && *pvc.Spec.VolumeMode == corev1.PersistentVolumeBlock:
		return "volumeMode Block is not supported: volumes are provisioned as local directories"
	}
	return ""
}

// consumerNode returns the node of the first (oldest) scheduled, unfinished
// pod that uses claim, or "".
func consumerNode(pods []corev1.Pod, claim string) string {
	var best *corev1.Pod
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		uses := false
		for _, n := range claimNames(p) {
			uses = uses || n == claim
		}
		if uses && (best == nil || p.CreationTimestamp.Time.Before(best.CreationTimestamp.Time)) {
			best = p
		}
	}
	if best == nil {
		return ""
	}
	return best.Spec.NodeName
}

// claimNames lists the claims pod's volumes name.
func claimNames(pod *corev1.Pod) []string {
	var out []string
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			out = append(out, pod.Name+"-"+v.Name)
		}
	}
	return out
}
