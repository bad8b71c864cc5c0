package daemonset

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/history"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
)

const defaultRevisionHistoryLimit = 10

// revisionData is what a DaemonSet revision stores: a patch that replaces
// spec.template, byte for byte as Kubernetes' daemon set controller writes it
// (its getPatch): the DaemonSet's template through a generic JSON map, so keys
// are sorted at every level and numbers are float64s, with "$patch":"replace"
// in the template and no null creationTimestamp. Clients compare revisions to a DaemonSet by these bytes
// (kubectl rollout history, the e2e suite's daemon.Match), so a revision
// whose data is the same template in another key order matches nothing.
func revisionData(ds *appsv1.DaemonSet) ([]byte, error) {
	raw, err := json.Marshal(ds.Spec.Template)
	if err != nil {
		return nil, fmt.Errorf("encode daemonset %s/%s template: %w", ds.Namespace, ds.Name, err)
	}
	var template map[string]any
	if err := json.Unmarshal(raw, &template); err != nil {
		return nil, fmt.Errorf("decode daemonset %s/%s template: %w", ds.Namespace, ds.Name, err)
	}
	// Kubernetes' ObjectMeta leaves a zero creationTimestamp out (omitzero
	// since 1.33) where ours writes null.
	if md, ok := template["metadata"].(map[string]any); ok {
		if v, ok := md["creationTimestamp"]; ok && v == nil {
			delete(md, "creationTimestamp")
		}
	}
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// ownedRevisions keeps the revisions controlled by ds.
func ownedRevisions(ds *appsv1.DaemonSet, crs []appsv1.ControllerRevision) []appsv1.ControllerRevision {
	var out []appsv1.ControllerRevision
	for _, cr := range crs {
		if controllerutil.IsControlledBy(&cr, ds) {
			out = append(out, cr)
		}
	}
	return out
}

// ensureRevision makes the ControllerRevision of the current template exist
// with the highest revision number and returns its name and template hash
// (its pods' controller-revision-hash label).
func (r *reconciler) ensureRevision(ctx context.Context, ds *appsv1.DaemonSet, crs []appsv1.ControllerRevision) (name, hash string, err error) {
	data, err := revisionData(ds)
	if err != nil {
		return "", "", err
	}
	want := history.Revision{Owner: ds, Ref: controllerRef(ds), Template: &ds.Spec.Template, Data: data,
		Label: func(_, hash string) (string, string) { return appsv1.DefaultDaemonSetUniqueLabelKey, hash }}
	name, hash, err = history.Ensure(ctx, r.revisions, want, &ds.Status.CollisionCount, crs)
	if err != nil {
		return "", "", fmt.Errorf("daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	return name, hash, nil
}

// cleanupRevisions deletes the oldest revisions beyond revisionHistoryLimit
// that no pod uses and that are not the current one.
func (r *reconciler) cleanupRevisions(ctx context.Context, ds *appsv1.DaemonSet, crs []appsv1.ControllerRevision, pods []corev1.Pod, currentName, current string) error {
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
		if !inUse[cr.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]] && cr.Name != currentName {
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
