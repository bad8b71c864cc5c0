package replicaset

import (
	"context"
	"errors"
	"fmt"
	"slices"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/go-logr/logr"
)

// controllerRef returns the controller ownerReference rs puts on its pods:
// of kind ReplicaSet, or ReplicationController for the reconciler of those.
func (r *reconciler) controllerRef(rs *appsv1.ReplicaSet) api.OwnerReference {
	return controllerutil.NewControllerRef(rs, r.ownerKind())
}

// claimPods returns the pods rs owns after adopting matching orphans and
// releasing owned pods that no longer match, like Kubernetes'
// ControllerRefManager. pods are active pods of rs's namespace.
func (r *reconciler) claimPods(ctx context.Context, rs *appsv1.ReplicaSet, sel labels.Selector, pods []*corev1.Pod) ([]*corev1.Pod, error) {
	log := logr.FromContextOrDiscard(ctx)
	var (
		claimed  []*corev1.Pod
		errs     []error
		canAdopt *bool
	)
	for _, p := range pods {
		ref := controllerutil.GetControllerOf(p)
		match := !sel.Empty() && sel.Matches(p.Labels)
		switch {
		case ref != nil && ref.UID != rs.UID:
			continue // someone else's
		case ref != nil && match:
			claimed = append(claimed, p)
		case ref != nil:
			// Ours, no longer matching: release unless we are going away.
			if rs.DeletionTimestamp != nil {
				continue
			}
			refs := slices.DeleteFunc(slices.Clone(p.OwnerReferences), func(o api.OwnerReference) bool { return o.UID == rs.UID })
			if err := r.setPodOwners(ctx, p, refs); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("release pod %s/%s: %w", p.Namespace, p.Name, err))
				continue
			}
			log.V(1).Info("released pod", "pod", p.Name)
		case !match || rs.DeletionTimestamp != nil || p.DeletionTimestamp != nil:
			continue
		default:
			// An orphan that matches: adopt it, after checking once against the
			// live ReplicaSet that it is not being deleted (the cache may lag).
			if canAdopt == nil {
				ok, err := r.canAdopt(ctx, rs)
				if err != nil {
					errs = append(errs, err)
					ok = false
				}
				canAdopt = &ok
			}
			if !*canAdopt {
				continue
			}
			refs := append(slices.Clone(p.OwnerReferences), r.controllerRef(rs))
			if err := r.setPodOwners(ctx, p, refs); err != nil {
				if !apierrors.IsNotFound(err) {
					errs = append(errs, fmt.Errorf("adopt pod %s/%s: %w", p.Namespace, p.Name, err))
				}
				continue
			}
			log.V(1).Info("adopted pod", "pod", p.Name)
			claimed = append(claimed, p)
		}
	}
	return claimed, errors.Join(errs...)
}

// setPodOwners replaces the ownerReferences of pod, failing with a Conflict
// if the pod changed since it was read.
func (r *reconciler) setPodOwners(ctx context.Context, pod *corev1.Pod, refs []api.OwnerReference) error {
	p, err := controllerutil.OwnerReferencesPatch(pod.ResourceVersion, refs)
	if err != nil {
		return err
	}
	// A new object receives the answer: pod is the cache's.
	return r.client.Patch(ctx, &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}}, p)
}

func (r *reconciler) canAdopt(ctx context.Context, rs *appsv1.ReplicaSet) (bool, error) {
	live := &appsv1.ReplicaSet{}
	err := r.live.Get(ctx, client.ObjectKey{Namespace: rs.Namespace, Name: rs.Name}, live)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get replicaset %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	return live.UID == rs.UID && live.DeletionTimestamp == nil, nil
}
