package statefulset

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

// revisionPatch is what a StatefulSet revision stores.
type revisionPatch struct {
	Spec struct {
		Template corev1.PodTemplateSpec `json:"template"`
	} `json:"spec"`
}

func revisionData(t corev1.PodTemplateSpec) ([]byte, error) {
	var p revisionPatch
	p.Spec.Template = t
	return json.Marshal(p)
}

// revisionTemplate reads the template a revision stores.
func revisionTemplate(cr *appsv1.ControllerRevision) (corev1.PodTemplateSpec, error) {
	var p revisionPatch
	if err := json.Unmarshal(cr.Data.Raw, &p); err != nil {
		return corev1.PodTemplateSpec{}, fmt.Errorf("decode revision %s: %w", cr.Name, err)
	}
	return p.Spec.Template, nil
}

// ensureRevision makes the revision of the current template exist with the
// highest number and returns its name (the update revision).
func (r *reconciler) ensureRevision(ctx context.Context, s *appsv1.StatefulSet, crs []appsv1.ControllerRevision) (string, error) {
	data, err := revisionData(s.Spec.Template)
	if err != nil {
		return "", err
	}
	var maxRev int64
	for _, cr := range crs {
		maxRev = max(maxRev, cr.Revision)
	}
	for range 5 {
		hash := history.ComputeHash(&s.Spec.Template, s.Status.CollisionCount)
		name := s.Name + "-" + hash
		if i := slices.IndexFunc(crs, func(cr appsv1.ControllerRevision) bool { return cr.Name == name }); i >= 0 {
			cr := crs[i]
			if !history.JSONEqual(cr.Data.Raw, data) {
				s.Status.CollisionCount = history.NextCollisionCount(s.Status.CollisionCount)
				continue
			}
			if cr.Revision < maxRev {
				cr.Revision = maxRev + 1
				if err := r.updateRevision(ctx, &cr); err != nil {
					return "", fmt.Errorf("update revision %s: %w", name, err)
				}
			}
			return name, nil
		}
		lbls := maps.Clone(s.Spec.Template.Labels)
		if lbls == nil {
			lbls = map[string]string{}
		}
		lbls[appsv1.StatefulSetRevisionLabel] = name
		cr := &appsv1.ControllerRevision{
			ObjectMeta: api.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: lbls,
				OwnerReferences: []api.OwnerReference{controllerRef(s)}},
			Data: api.RawExtension{Raw: data}, Revision: maxRev + 1,
		}
		if err := r.createRevision(ctx, cr); err != nil {
			if apierrors.IsAlreadyExists(err) {
				s.Status.CollisionCount = history.NextCollisionCount(s.Status.CollisionCount)
				continue
			}
			return "", fmt.Errorf("create revision %s: %w", name, err)
		}
		return name, nil
	}
	return "", fmt.Errorf("statefulset %s/%s: too many revision hash collisions", s.Namespace, s.Name)
}

// cleanupRevisions deletes the oldest unused revisions beyond
// revisionHistoryLimit.
func (r *reconciler) cleanupRevisions(ctx context.Context, s *appsv1.StatefulSet, crs []appsv1.ControllerRevision, pods []corev1.Pod) error {
	limit := 10
	if s.Spec.RevisionHistoryLimit != nil {
		limit = int(*s.Spec.RevisionHistoryLimit)
	}
	inUse := map[string]bool{s.Status.CurrentRevision: true, s.Status.UpdateRevision: true}
	for _, p := range pods {
		inUse[p.Labels[appsv1.StatefulSetRevisionLabel]] = true
	}
	var old []appsv1.ControllerRevision
	for _, cr := range crs {
		if !inUse[cr.Name] {
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
