package deployment

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/record"
	"github.com/go-logr/logr"
)

func controllerRef(d *appsv1.Deployment) api.OwnerReference {
	return controllerutil.NewControllerRef(d, appsv1.GroupVersion.WithKind("Deployment"))
}

// claimReplicaSets returns (copies of) the ReplicaSets d owns after adopting
// matching orphans and releasing owned ones that stop matching.
func (r *reconciler) claimReplicaSets(ctx context.Context, d *appsv1.Deployment, sel labels.Selector) ([]*appsv1.ReplicaSet, error) {
	var (
		out      []*appsv1.ReplicaSet
		errs     []error
		canAdopt *bool
	)
	all, err := r.replicaSets.List(ctx, client.InNamespace(d.Namespace))
	if err != nil {
		return nil, fmt.Errorf("list replicasets of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	for _, cached := range all {
		ref := controllerutil.GetControllerOf(cached)
		match := sel.Matches(cached.Labels)
		switch {
		case ref != nil && ref.UID != d.UID:
			continue
		case ref != nil && !match:
			if d.DeletionTimestamp != nil {
				continue
			}
			refs := slices.DeleteFunc(slices.Clone(cached.OwnerReferences), func(o api.OwnerReference) bool { return o.UID == d.UID })
			if err := r.setReplicaSetOwners(ctx, cached, refs); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("release replicaset %s: %w", cached.Name, err))
			}
			continue
		case ref == nil:
			if !match || d.DeletionTimestamp != nil || cached.DeletionTimestamp != nil {
				continue
			}
			if canAdopt == nil {
				live := &appsv1.Deployment{}
				err := r.live.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: d.Name}, live)
				ok := err == nil && live.UID == d.UID && live.DeletionTimestamp == nil
				if err != nil && !apierrors.IsNotFound(err) {
					errs = append(errs, fmt.Errorf("get deployment %s/%s: %w", d.Namespace, d.Name, err))
				}
				canAdopt = &ok
			}
			if !*canAdopt {
				continue
			}
			refs := append(slices.Clone(cached.OwnerReferences), controllerRef(d))
			if err := r.setReplicaSetOwners(ctx, cached, refs); err != nil {
				if !apierrors.IsNotFound(err) {
					errs = append(errs, fmt.Errorf("adopt replicaset %s: %w", cached.Name, err))
				}
				continue
			}
		}
		rs, err := podutil.Clone(cached)
		if err != nil {
			return nil, err
		}
		out = append(out, rs)
	}
	return out, errors.Join(errs...)
}

// findNewReplicaSet returns the oldest ReplicaSet whose template equals d's
// (ignoring the hash label), or nil.
func findNewReplicaSet(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	sorted := slices.Clone(rsList)
	slices.SortFunc(sorted, byCreation)
	for _, rs := range sorted {
		if EqualIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// getAllReplicaSetsAndSyncRevision splits rsList into the new ReplicaSet and
// the old ones, bringing the new one's revision up to date, creating it when
// create is set and it does not exist.
func (r *reconciler) getAllReplicaSetsAndSyncRevision(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, error) {
	existing := findNewReplicaSet(d, rsList)
	var old []*appsv1.ReplicaSet
	for _, rs := range rsList {
		if rs != existing {
			old = append(old, rs)
		}
	}
	newRS, err := r.getNewReplicaSet(ctx, d, existing, old, create)
	return newRS, old, err
}

func (r *reconciler) getNewReplicaSet(ctx context.Context, d *appsv1.Deployment, existing *appsv1.ReplicaSet, old []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, error) {
	newRevision := maxRevision(old) + 1
	if existing != nil {
		changed := setNewReplicaSetAnnotations(d, existing, newRevision, true)
		if existing.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
			existing.Spec.MinReadySeconds = d.Spec.MinReadySeconds
			changed = true
		}
		if changed {
			if err := r.client.Update(ctx, existing); err != nil {
				return nil, fmt.Errorf("update replicaset %s/%s: %w", existing.Namespace, existing.Name, err)
			}
		}
		if err := r.syncRevision(ctx, d, existing.Annotations[RevisionAnnotation]); err != nil {
			return nil, err
		}
		if hasProgressDeadline(d) && getCondition(&d.Status, appsv1.DeploymentProgressing) == nil {
			setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonFoundNewRS,
				fmt.Sprintf("Found new replica set %q", existing.Name), r.now()))
			if err := r.status.Update(ctx, d); err != nil {
				return nil, fmt.Errorf("update status of deployment %s/%s: %w", d.Namespace, d.Name, err)
			}
		}
		return existing, nil
	}
	if !create {
		return nil, nil
	}

	hash := ComputeHash(&d.Spec.Template, d.Status.CollisionCount)
	tmpl, err := podutil.Clone(&d.Spec.Template)
	if err != nil {
		return nil, err
	}
	tmpl.Labels = maps.Clone(tmpl.Labels)
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	tmpl.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	sel, err := podutil.Clone(d.Spec.Selector)
	if err != nil {
		return nil, err
	}
	if sel.MatchLabels == nil {
		sel.MatchLabels = map[string]string{}
	}
	sel.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	rs := &appsv1.ReplicaSet{
		ObjectMeta: api.ObjectMeta{
			Name: d.Name + "-" + hash, Namespace: d.Namespace,
			OwnerReferences: []api.OwnerReference{controllerRef(d)},
			Labels:          maps.Clone(tmpl.Labels),
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: api.Ptr[int32](0), MinReadySeconds: d.Spec.MinReadySeconds, Selector: sel, Template: *tmpl},
	}
	size := NewRSNewReplicas(d, append(slices.Clone(old), rs), rs)
	rs.Spec.Replicas = api.Ptr(size)
	setNewReplicaSetAnnotations(d, rs, newRevision, false)

	err = r.client.Create(ctx, rs)
	alreadyExists := false
	switch {
	case apierrors.IsAlreadyExists(err):
		live := &appsv1.ReplicaSet{}
		gerr := r.live.Get(ctx, client.ObjectKey{Namespace: rs.Namespace, Name: rs.Name}, live)
		if gerr != nil {
			return nil, fmt.Errorf("get replicaset %s/%s: %w", rs.Namespace, rs.Name, gerr)
		}
		if ref := controllerutil.GetControllerOf(live); ref != nil && ref.UID == d.UID && EqualIgnoreHash(&live.Spec.Template, &d.Spec.Template) {
			rs, alreadyExists = live, true
			break
		}
		// A different template has this hash: bump the collision count so the
		// next attempt gets another name.
		n := int32(0)
		if d.Status.CollisionCount != nil {
			n = *d.Status.CollisionCount
		}
		d.Status.CollisionCount = api.Ptr(n + 1)
		if uerr := r.status.Update(ctx, d); uerr != nil {
			return nil, fmt.Errorf("update collision count of deployment %s/%s: %w", d.Namespace, d.Name, uerr)
		}
		logr.FromContextOrDiscard(ctx).V(1).Info("hash collision", "replicaset", rs.Name, "collisionCount", n+1)
		return nil, fmt.Errorf("replicaset %s/%s: hash collision (collisionCount now %d)", rs.Namespace, rs.Name, n+1)
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", rs.Name, err)
		r.recorder.Event(ctx, d, record.Warning, ReasonFailedRSCreate, msg)
		if hasProgressDeadline(d) {
			setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonFailedRSCreate, msg, r.now()))
			_ = r.status.Update(ctx, d) // best effort: the create error is what we return
		}
		return nil, fmt.Errorf("create replicaset %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	if !alreadyExists && size > 0 {
		r.recorder.Event(ctx, d, record.Normal, ReasonScalingReplicaSet, fmt.Sprintf("Scaled up replica set %s from 0 to %d", rs.Name, size))
	}
	if err := r.syncRevision(ctx, d, strconv.FormatInt(newRevision, 10)); err != nil {
		return nil, err
	}
	if !alreadyExists && hasProgressDeadline(d) {
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewRSCreated,
			fmt.Sprintf("Created new replica set %q", rs.Name), r.now()))
		if err := r.status.Update(ctx, d); err != nil {
			return nil, fmt.Errorf("update status of deployment %s/%s: %w", d.Namespace, d.Name, err)
		}
	}
	return rs, nil
}

// syncRevision sets the Deployment's revision annotation, keeping the
// in-memory status (the patch answer carries the stored one).
func (r *reconciler) syncRevision(ctx context.Context, d *appsv1.Deployment, revision string) error {
	if revision == "" || d.Annotations[RevisionAnnotation] == revision {
		return nil
	}
	st := d.Status
	if err := r.setRevision(ctx, d, revision); err != nil {
		return fmt.Errorf("set revision of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	d.Status = st
	return nil
}
