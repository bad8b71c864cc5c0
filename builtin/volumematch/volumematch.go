package volumematch

import (
	"fmt"
	"slices"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/nodeselector"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
)

// NoProvisioner is the provisioner of storage classes of pre-created
// volumes only (local volumes): nothing provisions their claims.
const NoProvisioner = "kubernetes.io/no-provisioner"

// BoundTo reports whether pv's claimRef names pvc (by namespace and name, and
// by uid when the reference has one): pv is bound or pre-bound to pvc.
func BoundTo(pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) bool {
	ref := pv.Spec.ClaimRef
	return ref != nil && ref.Namespace == pvc.Namespace && ref.Name == pvc.Name && (ref.UID == "" || ref.UID == pvc.UID)
}

// StorageOf returns the storage quantity of a resource list.
func StorageOf(l corev1.ResourceList) (api.Quantity, bool) {
	q, ok := l[string(corev1.ResourceStorage)]
	return q, ok
}

// volumeMode is a spec's volume mode (Filesystem when unset).
func volumeMode(m *corev1.PersistentVolumeMode) corev1.PersistentVolumeMode {
	if m == nil {
		return corev1.PersistentVolumeFilesystem
	}
	return *m
}

// Mismatch says why pv cannot satisfy pvc of class (its storage class, ""
// for none), or "" when it can: the same class, every requested access mode,
// at least the requested storage, the same volume mode, and (when node is
// not nil: binding waits for the first consumer) a node affinity node
// satisfies. Kubernetes ignores the node affinity for Immediate binding;
// so does this.
func Mismatch(pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim, class string, node *corev1.Node) string {
	if pv.Spec.StorageClassName != class {
		return fmt.Sprintf("storageClassName does not match (volume %q, claim %q)", pv.Spec.StorageClassName, class)
	}
	for _, m := range pvc.Spec.AccessModes {
		if !slices.Contains(pv.Spec.AccessModes, m) {
			return fmt.Sprintf("incompatible accessMode: volume lacks %s", m)
		}
	}
	want, _ := StorageOf(pvc.Spec.Resources.Requests)
	have, _ := StorageOf(pv.Spec.Capacity)
	if have.Cmp(want) < 0 {
		return fmt.Sprintf("requested PV is too small (%s < %s)", have.String(), want.String())
	}
	if volumeMode(pv.Spec.VolumeMode) != volumeMode(pvc.Spec.VolumeMode) {
		return fmt.Sprintf("incompatible volumeMode (volume %s, claim %s)", volumeMode(pv.Spec.VolumeMode), volumeMode(pvc.Spec.VolumeMode))
	}
	if node != nil && pv.Spec.NodeAffinity != nil && pv.Spec.NodeAffinity.Required != nil &&
		!nodeselector.SelectorMatches(pv.Spec.NodeAffinity.Required, node) {
		return fmt.Sprintf("node %q does not satisfy the volume's node affinity", node.Name)
	}
	return ""
}

// Best returns the volume pvc should be bound to, or nil, as
// Kubernetes' findBestMatchForClaim chooses it: a volume pre-bound to the
// claim (spec.claimRef naming it) that satisfies it comes first; otherwise
// the smallest satisfying volume that is Available (no claimRef, not being
// deleted, not Failed) and whose labels the claim's selector matches.
func Best(pvc *corev1.PersistentVolumeClaim, pvs []*corev1.PersistentVolume, class string, node *corev1.Node) *corev1.PersistentVolume {
	sel := labels.Everything()
	if pvc.Spec.Selector != nil {
		s, err := labels.FromLabelSelector(pvc.Spec.Selector)
		if err != nil {
			return nil // validation rejects such selectors
		}
		sel = s
	}
	var best *corev1.PersistentVolume
	var bestSize api.Quantity
	for _, pv := range pvs {
		if pv.DeletionTimestamp != nil || pv.Status.Phase == corev1.VolumeFailed || Mismatch(pv, pvc, class, node) != "" {
			continue
		}
		if BoundTo(pv, pvc) {
			return pv
		}
		if pv.Spec.ClaimRef != nil || !sel.Matches(pv.Labels) {
			continue
		}
		size, _ := StorageOf(pv.Spec.Capacity)
		if best == nil || size.Cmp(bestSize) < 0 || size.Cmp(bestSize) == 0 && pv.Name < best.Name {
			best, bestSize = pv, size
		}
	}
	return best
}
