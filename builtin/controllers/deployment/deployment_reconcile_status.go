package deployment

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/record"
)

// calculateStatus derives the Deployment's status from its ReplicaSets,
// including the Available condition.
func calculateStatus(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, now time.Time) appsv1.DeploymentStatus {
	st := appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		CollisionCount:     d.Status.CollisionCount,
		Conditions:         slices.Clone(d.Status.Conditions),
	}
	var total int32
	for _, rs := range all {
		if rs == nil {
			continue
		}
		st.Replicas += rs.Status.Replicas
		st.ReadyReplicas += rs.Status.ReadyReplicas
		st.AvailableReplicas += rs.Status.AvailableReplicas
		total += rsReplicas(rs)
	}
	if newRS != nil {
		st.UpdatedReplicas = newRS.Status.Replicas
	}
	st.UnavailableReplicas = max(total-st.AvailableReplicas, 0)
	if st.AvailableReplicas >= replicasOf(d)-MaxUnavailable(d) {
		setCondition(&st, newCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue, ReasonMinimumAvailable, "Deployment has minimum availability.", now))
	} else {
		setCondition(&st, newCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, ReasonMinimumUnavailable, "Deployment does not have minimum availability.", now))
	}
	return st
}

// syncDeploymentStatus writes the calculated status when it changed.
func (r *reconciler) syncDeploymentStatus(ctx context.Context, d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) error {
	st := calculateStatus(d, all, newRS, r.now())
	return r.writeStatus(ctx, d, st)
}

func (r *reconciler) writeStatus(ctx context.Context, d *appsv1.Deployment, st appsv1.DeploymentStatus) error {
	if reflect.DeepEqual(d.Status, st) {
		return nil
	}
	d.Status = st
	if err := r.status.Update(ctx, d); err != nil {
		return fmt.Errorf("update status of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	return nil
}

// syncRolloutStatus writes the status with the Progressing condition
// (complete, progressing or timed out) and ReplicaFailure copied from the
// ReplicaSets, and asks to be requeued when the progress deadline would pass.
func (r *reconciler) syncRolloutStatus(ctx context.Context, d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (reconcile.Result, error) {
	now := r.now()
	st := calculateStatus(d, all, newRS, now)
	if !hasProgressDeadline(d) {
		removeCondition(&st, appsv1.DeploymentProgressing)
	}
	cur := getCondition(&d.Status, appsv1.DeploymentProgressing)
	complete := st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == ReasonNewRSAvailable
	what := fmt.Sprintf("Deployment %q", d.Name)
	if newRS != nil {
		what = fmt.Sprintf("ReplicaSet %q", newRS.Name)
	}
	if hasProgressDeadline(d) && !complete {
		switch {
		case deploymentComplete(d, &st):
			setCondition(&st, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewRSAvailable, what+" has successfully progressed.", now))
		case deploymentProgressing(d, &st):
			c := newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonRSUpdated, what+" is progressing.", now)
			if cur != nil && cur.Status == corev1.ConditionTrue {
				c.LastTransitionTime = cur.LastTransitionTime
			}
			removeCondition(&st, appsv1.DeploymentProgressing)
			st.Conditions = append(st.Conditions, c)
		case deploymentTimedOut(d, &st, now):
			if cur == nil || cur.Reason != ReasonTimedOut {
				r.recorder.Event(ctx, d, record.Warning, ReasonTimedOut, what+" has timed out progressing.")
			}
			setCondition(&st, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonTimedOut, what+" has timed out progressing.", now))
		}
	}
	if f := replicaFailure(all); f != nil {
		setCondition(&st, *f)
	} else {
		removeCondition(&st, appsv1.DeploymentReplicaFailure)
	}
	if err := r.writeStatus(ctx, d, st); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: requeueStuck(d, &st, now)}, nil
}

// requeueStuck returns when the progress deadline of an unfinished rollout
// passes (0 when there is nothing to wait for).
func requeueStuck(d *appsv1.Deployment, st *appsv1.DeploymentStatus, now time.Time) time.Duration {
	c := getCondition(st, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || c == nil || d.Spec.Paused || deploymentComplete(d, st) || c.Reason == ReasonTimedOut {
		return 0
	}
	if c.Reason == ReasonNewRSAvailable && st.Replicas == st.UpdatedReplicas {
		return 0
	}
	after := c.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(now)
	return max(after, 0) + time.Second
}

// replicaFailure returns the first ReplicaFailure condition of the
// ReplicaSets, as a Deployment condition.
func replicaFailure(all []*appsv1.ReplicaSet) *appsv1.DeploymentCondition {
	for _, rs := range all {
		if rs == nil {
			continue
		}
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure {
				return &appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: c.Status, Reason: c.Reason,
					Message: c.Message, LastUpdateTime: c.LastTransitionTime, LastTransitionTime: c.LastTransitionTime}
			}
		}
	}
	return nil
}

// cleanupDeployment deletes old ReplicaSets beyond revisionHistoryLimit,
// oldest revision first, when they have no replicas and are fully observed.
func (r *reconciler) cleanupDeployment(ctx context.Context, d *appsv1.Deployment, old []*appsv1.ReplicaSet) error {
	if d.Spec.RevisionHistoryLimit == nil {
		return nil
	}
	var cleanable []*appsv1.ReplicaSet
	for _, rs := range old {
		if rs.Spec.Replicas != nil && rs.DeletionTimestamp == nil {
			cleanable = append(cleanable, rs)
		}
	}
	diff := len(cleanable) - int(*d.Spec.RevisionHistoryLimit)
	if diff <= 0 {
		return nil
	}
	slices.SortFunc(cleanable, func(a, b *appsv1.ReplicaSet) int {
		if ra, rb := revisionOf(a), revisionOf(b); ra != rb {
			if ra < rb {
				return -1
			}
			return 1
		}
		return byCreation(a, b)
	})
	for _, rs := range cleanable[:diff] {
		if rs.Status.Replicas != 0 || rsReplicas(rs) != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		if err := r.deleteReplicaSet(ctx, rs); err != nil && !isGone(err) {
			return fmt.Errorf("delete old replicaset %s/%s: %w", rs.Namespace, rs.Name, err)
		}
	}
	return nil
}
