package statefulset

import (
	"context"
	"fmt"
	"slices"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// persistentVolumeClaimRetentionPolicy semantics, as Kubernetes implements
// them with owner references (the garbage collector does the deleting):
//
//   - whenDeleted=Delete: each claim of an ordinal in range is owned by the
//     StatefulSet, so deleting the set deletes its claims;
//   - whenScaled=Delete: the claims of a pod removed by a scale-down are owned
//     by that pod (and no longer by the set), so they go once the pod is gone;
//     an ordinal scaled back up before that takes its claims back.
//
// Retain drops the corresponding reference, so changing the policy updates
// the existing claims.

// claimOwnerRefs returns refs with the StatefulSet and pod references the
// policy wants on a claim of pod (scaledDown: its ordinal is out of range),
// and whether that differs from refs.
func claimOwnerRefs(s *appsv1.StatefulSet, refs []api.OwnerReference, pod *corev1.Pod, scaledDown bool) ([]api.OwnerReference, bool) {
	deleteWithSet, deleteScaled := false, false
	if rp := s.Spec.PersistentVolumeClaimRetentionPolicy; rp != nil {
		deleteWithSet = rp.WhenDeleted == appsv1.DeletePersistentVolumeClaimRetentionPolicyType
		deleteScaled = rp.WhenScaled == appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	}
	wantSet := deleteWithSet && !(scaledDown && deleteScaled)
	wantPod := scaledDown && deleteScaled && pod != nil
	isSet := func(r api.OwnerReference) bool { return r.Kind == "StatefulSet" && r.UID == s.UID }
	// Any pod reference of this ordinal's name: an older pod of the same
	// ordinal may have been the owner.
	isPod := func(r api.OwnerReference) bool {
		return r.Kind == "Pod" && r.APIVersion == "v1" && pod != nil && r.Name == pod.Name
	}
	out := slices.DeleteFunc(slices.Clone(refs), func(r api.OwnerReference) bool {
		return isSet(r) && !wantSet || isPod(r) && (!wantPod || r.UID != pod.UID)
	})
	if wantSet && !slices.ContainsFunc(out, isSet) {
		out = append(out, api.OwnerReference{APIVersion: appsv1.GroupVersion.String(), Kind: "StatefulSet",
			Name: s.Name, UID: s.UID, BlockOwnerDeletion: api.Ptr(true)})
	}
	if wantPod && !slices.ContainsFunc(out, isPod) {
		out = append(out, api.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID})
	}
	changed := len(out) != len(refs)
	for i := 0; !changed && i < len(out); i++ {
		changed = out[i].UID != refs[i].UID || out[i].Kind != refs[i].Kind
	}
	if len(out) == 0 {
		out = nil
	}
	return out, changed
}

// syncClaimOwners updates the owner references of the claims of ordinal ord
// (whose pod is pod, nil if none) to the retention policy.
func (r *reconciler) syncClaimOwners(ctx context.Context, s *appsv1.StatefulSet, ord int, pod *corev1.Pod, scaledDown bool) error {
	for i := range s.Spec.VolumeClaimTemplates {
		name := claimName(&s.Spec.VolumeClaimTemplates[i], s, ord)
		pvc := &corev1.PersistentVolumeClaim{}
		err := r.reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, pvc)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("get claim %s: %w", name, err)
		}
		if pvc.DeletionTimestamp != nil {
			continue
		}
		refs, changed := claimOwnerRefs(s, pvc.OwnerReferences, pod, scaledDown)
		if !changed {
			continue
		}
		pvc.OwnerReferences = refs
		if err := r.client.Update(ctx, pvc); err != nil {
			return fmt.Errorf("update owners of claim %s: %w", name, err)
		}
	}
	return nil
}
