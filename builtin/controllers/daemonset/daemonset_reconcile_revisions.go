package daemonset

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/converge-dev/converge/builtin/controllers/internal/history"
	"maps"
	"slices"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

const defaultRevisionHistoryLimit = 10

// revisionData is what a DaemonSet revision stores: the template as a patch.
func revisionData(ds *appsv1.DaemonSet) ([]byte, error) {
	return json.Marshal(map[string]any{"spec": map[string]any{"template": ds.Spec.Template}})
}

// ownedRevisions keeps the revisions controlled by ds.
func ownedRevisions(ds *appsv1.DaemonSet, crs []appsv1.ControllerRevision) []appsv1.ControllerRevision {
	var out []appsv1.ControllerRevision
	for _, cr := range crs {
		if isControlledBy(cr.OwnerReferences, ds.UID) {
			out = append(out, cr)
		}
	}
	return out
}

// ensureRevision makes the ControllerRevision of the current template exist
// with the highest revision number and returns its hash.
func (r *reconciler) ensureRevision(ctx context.Context, ds *appsv1.DaemonSet, crs []appsv1.ControllerRevision) (string, error) {
	data, err := revisionData(ds)
	if err != nil {
		return "", err
	}
	var maxRev int64
	for _, cr := range crs {
		maxRev = max(maxRev, cr.Revision)
	}
	for attempt := 0; attempt < 5; attempt++ {
		hash := history.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
		name := ds.Name + "-" + hash
		if i := slices.IndexFunc(crs, func(cr appsv1.ControllerRevision) bool { return cr.Name == name }); i >= 0 {
			cr := crs[i]
			if !history.JSONEqual(cr.Data.Raw, data) {
				ds.Status.CollisionCount = history.NextCollisionCount(ds.Status.CollisionCount)
				continue
			}
			if cr.Revision < maxRev {
				// Rolled back to an older template: it becomes the newest.
				cr.Revision = maxRev + 1
				if err := r.updateRevision(ctx, &cr); err != nil {
					return "", fmt.Errorf("update revision %s: %w", name, err)
				}
			}
			return hash, nil
		}
		lbls := maps.Clone(ds.Spec.Template.Labels)
		if lbls == nil {
			lbls = map[string]string{}
		}
		lbls[appsv1.DefaultDaemonSetUniqueLabelKey] = hash
		cr := &appsv1.ControllerRevision{
			ObjectMeta: api.ObjectMeta{Name: name, Namespace: ds.Namespace, Labels: lbls,
				OwnerReferences: []api.OwnerReference{controllerRef(ds)}},
			Data:     api.RawExtension{Raw: data},
			Revision: maxRev + 1,
		}
		if err := r.createRevision(ctx, cr); err != nil {
			if apierrors.IsAlreadyExists(err) {
				// Not ours (or not seen yet): try the next hash.
				ds.Status.CollisionCount = history.NextCollisionCount(ds.Status.CollisionCount)
				continue
			}
			return "", fmt.Errorf("create revision %s: %w", name, err)
		}
		return hash, nil
	}
	return "", fmt.Errorf("daemonset %s/%s: too many revision hash collisions", ds.Namespace, ds.Name)
}

// cleanupRevisions deletes the oldest revisions beyond revisionHistoryLimit
// that no pod uses and that are not the current one.
func (r *reconciler) cleanupRevisions(ctx context.Context, ds *appsv1.DaemonSet, crs []appsv1.ControllerRevision, pods []corev1.Pod, current string) error {
	limit := defaultRevisionHistoryLimit
	if ds.Spec.RevisionHistoryLimit != nil {
		limit = int(*ds.Spec.RevisionHistoryLimit)
	}
	inUse := map[string]bool{current: true}
	for _, p := range pods {
		inUse[p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]] = true
	}
	var old []appsv1.ControllerRevision
	for _, cr := range crs {
		if !inUse[cr.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]] && cr.Name != ds.Name+"-"+current {
			old = append(old, cr)
		}
	}
	for _, cr := range history.Prunable(old, limit) {
		if err := r.deleteRevision(ctx, &cr); err != nil {
			return fmt.Errorf("delete revision %s: %w", cr.Name, err)
		}
	}
	return nil
}
