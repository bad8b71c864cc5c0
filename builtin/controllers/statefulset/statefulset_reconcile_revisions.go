package statefulset

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/history"
	"github.com/converge-dev/converge/framework/client"
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
	want := history.Revision{Owner: s, Ref: controllerRef(s), Template: &s.Spec.Template, Data: data,
		Label: func(name, _ string) (string, string) { return appsv1.StatefulSetRevisionLabel, name }}
	name, _, err := history.Ensure(ctx, r.revisions, want, &s.Status.CollisionCount, crs)
	if err != nil {
		return "", fmt.Errorf("statefulset %s/%s: %w", s.Namespace, s.Name, err)
	}
	return name, nil
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
		if err := client.IgnoreNotFound(r.client.Delete(ctx, &cr)); err != nil {
			return fmt.Errorf("delete revision %s: %w", cr.Name, err)
		}
	}
	return nil
}
