package deployment

import (
	"context"
	"fmt"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/record"
)

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile brings one Deployment's ReplicaSets and status in line with its
// spec, in Kubernetes' order: claim ReplicaSets, paused condition, then
// either a plain sync (paused, or a scaling event) or one rollout step.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cached, err := r.deployments.Get(ctx, req.ObjectKey)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get deployment %s: %w", req.ObjectKey, err)
	}
	d, err := podutil.Clone(cached)
	if err != nil {
		return reconcile.Result{}, err
	}
	sel, err := labels.FromLabelSelector(d.Spec.Selector)
	if err != nil {
		return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("deployment %s: invalid selector: %w", req, err))
	}
	if sel.Empty() {
		r.recorder.Event(ctx, d, record.Warning, ReasonSelectingAll, "This deployment is selecting all pods. A non-empty selector is required.")
		if d.Status.ObservedGeneration < d.Generation {
			d.Status.ObservedGeneration = d.Generation
			if err := r.status.Update(ctx, d); err != nil {
				return reconcile.Result{}, fmt.Errorf("update status of deployment %s: %w", req, err)
			}
		}
		return reconcile.Result{}, nil
	}
	rsList, err := r.claimReplicaSets(ctx, d, sel)
	if err != nil {
		return reconcile.Result{}, err
	}
	if d.DeletionTimestamp != nil {
		return reconcile.Result{}, r.syncStatusOnly(ctx, d, rsList)
	}
	if err := r.checkPausedConditions(ctx, d); err != nil {
		return reconcile.Result{}, err
	}
	if d.Spec.Paused || isScalingEvent(d, rsList) {
		return reconcile.Result{}, r.sync(ctx, d, rsList)
	}
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		pods, err := r.podsByReplicaSet(ctx, d, rsList)
		if err != nil {
			return reconcile.Result{}, err
		}
		return r.rolloutRecreate(ctx, d, rsList, pods)
	}
	return r.rolloutRolling(ctx, d, rsList)
}

// isScalingEvent reports whether replicas differs from what an active
// ReplicaSet was last sized for (its desired-replicas annotation).
func isScalingEvent(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) bool {
	for _, rs := range activeOnly(rsList) {
		if want, ok := intAnnotation(rs, DesiredReplicasAnnotation); ok && want != replicasOf(d) {
			return true
		}
	}
	return false
}

// podsByReplicaSet maps each ReplicaSet's UID to its pods, terminating ones
// included.
func (r *reconciler) podsByReplicaSet(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) (map[string][]*corev1.Pod, error) {
	uids := map[string]bool{}
	for _, rs := range rsList {
		uids[string(rs.UID)] = true
	}
	pods, err := r.pods.List(ctx, client.InNamespace(d.Namespace))
	if err != nil {
		return nil, fmt.Errorf("list pods of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	out := map[string][]*corev1.Pod{}
	for _, p := range pods {
		if ref := controllerutil.GetControllerOf(p); ref != nil && uids[string(ref.UID)] {
			out[string(ref.UID)] = append(out[string(ref.UID)], p)
		}
	}
	return out, nil
}

// checkPausedConditions sets Progressing to Unknown/DeploymentPaused when the
// Deployment is paused, and to Unknown/DeploymentResumed when it resumes.
func (r *reconciler) checkPausedConditions(ctx context.Context, d *appsv1.Deployment) error {
	if !hasProgressDeadline(d) {
		return nil
	}
	c := getCondition(&d.Status, appsv1.DeploymentProgressing)
	if c != nil && c.Reason == ReasonTimedOut {
		return nil
	}
	pausedCond := c != nil && c.Reason == ReasonPaused
	switch {
	case d.Spec.Paused && !pausedCond:
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, ReasonPaused, "Deployment is paused", r.now()))
	case !d.Spec.Paused && pausedCond:
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, ReasonResumed, "Deployment is resumed", r.now()))
	default:
		return nil
	}
	if err := r.status.Update(ctx, d); err != nil {
		return fmt.Errorf("update status of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	return nil
}

// sync scales the Deployment's ReplicaSets without rolling out (paused
// Deployments and scaling events) and updates the status.
func (r *reconciler) sync(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := r.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	if err := r.scale(ctx, d, newRS, oldRSs); err != nil {
		return err
	}
	if d.Spec.Paused {
		if err := r.cleanupDeployment(ctx, d, oldRSs); err != nil {
			return err
		}
	}
	return r.syncDeploymentStatus(ctx, d, append(oldRSs, newRS), newRS)
}

func (r *reconciler) syncStatusOnly(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := r.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	return r.syncDeploymentStatus(ctx, d, append(oldRSs, newRS), newRS)
}
