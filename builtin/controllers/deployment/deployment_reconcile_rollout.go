package deployment

import (
	"context"
	"fmt"
	"slices"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/reconcile"
)

// rolloutRolling performs one step of a rolling update: scale the new
// ReplicaSet up within maxSurge, else scale old ones down within
// maxUnavailable, then clean up history when complete and sync the status.
func (r *reconciler) rolloutRolling(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) (reconcile.Result, error) {
	newRS, oldRSs, err := r.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true)
	if err != nil {
		return reconcile.Result{}, err
	}
	all := append(slices.Clone(oldRSs), newRS)

	scaledUp, err := r.reconcileNewReplicaSet(ctx, d, all, newRS)
	if err != nil {
		return reconcile.Result{}, err
	}
	if scaledUp {
		return r.syncRolloutStatus(ctx, d, all, newRS)
	}
	scaledDown, err := r.reconcileOldReplicaSets(ctx, d, all, activeOnly(oldRSs), newRS)
	if err != nil {
		return reconcile.Result{}, err
	}
	if scaledDown {
		return r.syncRolloutStatus(ctx, d, all, newRS)
	}
	if deploymentComplete(d, &d.Status) {
		if err := r.cleanupDeployment(ctx, d, oldRSs); err != nil {
			return reconcile.Result{}, err
		}
	}
	return r.syncRolloutStatus(ctx, d, all, newRS)
}

func (r *reconciler) reconcileNewReplicaSet(ctx context.Context, d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (bool, error) {
	want := replicasOf(d)
	switch cur := rsReplicas(newRS); {
	case cur == want:
		return false, nil
	case cur > want:
		return r.scaleReplicaSet(ctx, d, newRS, want)
	}
	return r.scaleReplicaSet(ctx, d, newRS, NewRSNewReplicas(d, all, newRS))
}

// reconcileOldReplicaSets scales old ReplicaSets down as far as
// maxUnavailable allows: first their unavailable pods, then available ones.
func (r *reconciler) reconcileOldReplicaSets(ctx context.Context, d *appsv1.Deployment, all, oldActive []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (bool, error) {
	if sumReplicas(oldActive) == 0 {
		return false, nil
	}
	minAvailable := replicasOf(d) - MaxUnavailable(d)
	newUnavailable := rsReplicas(newRS) - availableOf(newRS)
	maxScaledDown := sumReplicas(all) - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false, nil
	}
	cleaned, err := r.cleanupUnhealthyReplicas(ctx, d, oldActive, maxScaledDown)
	if err != nil {
		return false, err
	}
	down, err := r.scaleDownOldForRollingUpdate(ctx, d, all, oldActive, maxScaledDown-cleaned)
	if err != nil {
		return false, err
	}
	return cleaned+down > 0, nil
}

// cleanupUnhealthyReplicas scales old ReplicaSets down by their unavailable
// pods, oldest first, at most maxCleanup in all.
func (r *reconciler) cleanupUnhealthyReplicas(ctx context.Context, d *appsv1.Deployment, old []*appsv1.ReplicaSet, maxCleanup int32) (int32, error) {
	sorted := slices.Clone(old)
	slices.SortFunc(sorted, byCreation)
	var total int32
	for _, rs := range sorted {
		if total >= maxCleanup {
			break
		}
		unhealthy := rsReplicas(rs) - availableOf(rs)
		if rsReplicas(rs) == 0 || unhealthy <= 0 {
			continue
		}
		n := min(maxCleanup-total, unhealthy)
		if _, err := r.scaleReplicaSet(ctx, d, rs, rsReplicas(rs)-n); err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// scaleDownOldForRollingUpdate scales old ReplicaSets down, oldest first,
// while more than replicas-maxUnavailable pods stay available, and by at
// most limit.
func (r *reconciler) scaleDownOldForRollingUpdate(ctx context.Context, d *appsv1.Deployment, all, old []*appsv1.ReplicaSet, limit int32) (int32, error) {
	minAvailable := replicasOf(d) - MaxUnavailable(d)
	var available int32
	for _, rs := range all {
		available += availableOf(rs)
	}
	if available <= minAvailable || limit <= 0 {
		return 0, nil
	}
	budget := min(available-minAvailable, limit)
	sorted := slices.Clone(old)
	slices.SortFunc(sorted, byCreation)
	var total int32
	for _, rs := range sorted {
		if total >= budget {
			break
		}
		if rsReplicas(rs) == 0 {
			continue
		}
		n := min(rsReplicas(rs), budget-total)
		if _, err := r.scaleReplicaSet(ctx, d, rs, rsReplicas(rs)-n); err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// rolloutRecreate scales every old ReplicaSet to zero, waits until their pods
// are gone, then creates or scales up the new ReplicaSet.
func (r *reconciler) rolloutRecreate(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet, pods map[string][]*corev1.Pod) (reconcile.Result, error) {
	newRS, oldRSs, err := r.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return reconcile.Result{}, err
	}
	all := append(slices.Clone(oldRSs), newRS)
	scaledDown := false
	for _, rs := range activeOnly(oldRSs) {
		ok, err := r.scaleReplicaSet(ctx, d, rs, 0)
		if err != nil {
			return reconcile.Result{}, err
		}
		scaledDown = scaledDown || ok
	}
	if scaledDown || oldPodsRunning(newRS, oldRSs, pods) {
		return r.syncRolloutStatus(ctx, d, all, newRS)
	}
	if newRS == nil {
		if newRS, _, err = r.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true); err != nil {
			return reconcile.Result{}, err
		}
		all = append(slices.Clone(oldRSs), newRS)
	}
	if _, err := r.scaleReplicaSet(ctx, d, newRS, replicasOf(d)); err != nil {
		return reconcile.Result{}, err
	}
	if deploymentComplete(d, &d.Status) {
		if err := r.cleanupDeployment(ctx, d, oldRSs); err != nil {
			return reconcile.Result{}, err
		}
	}
	return r.syncRolloutStatus(ctx, d, all, newRS)
}

// oldPodsRunning reports whether old ReplicaSets still have pods that have
// not finished (terminating ones included).
func oldPodsRunning(newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet, pods map[string][]*corev1.Pod) bool {
	var n int32
	for _, rs := range old {
		n += rs.Status.Replicas
	}
	if n > 0 {
		return true
	}
	for uid, ps := range pods {
		if newRS != nil && string(newRS.UID) == uid {
			continue
		}
		for _, p := range ps {
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				return true
			}
		}
	}
	return false
}

// scaleReplicaSet sets rs's replicas (and replicas annotations), recording a
// ScalingReplicaSet event when the size changes. It reports whether the size
// changed.
func (r *reconciler) scaleReplicaSet(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet, size int32) (bool, error) {
	if rs == nil {
		return false, nil
	}
	from := rsReplicas(rs)
	sizeChanged := from != size
	annChanged := setReplicasAnnotations(rs, replicasOf(d), replicasOf(d)+MaxSurge(d))
	if !sizeChanged && !annChanged {
		return false, nil
	}
	rs.Spec.Replicas = &size
	if err := r.client.Update(ctx, rs); err != nil {
		return false, fmt.Errorf("scale replicaset %s/%s to %d: %w", rs.Namespace, rs.Name, size, err)
	}
	if sizeChanged {
		op := "up"
		if size < from {
			op = "down"
		}
		r.recorder.Event(ctx, d, "Normal", ReasonScalingReplicaSet, fmt.Sprintf("Scaled %s replica set %s from %d to %d", op, rs.Name, from, size))
	}
	return sizeChanged, nil
}
