package replicaset

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/go-logr/logr"
)

var _ reconcile.Reconciler = (*Reconciler)(nil)

// Reconcile brings one ReplicaSet's pods and status in line with its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := req.ObjectKey.String()
	cached := r.GetReplicaSet(req.ObjectKey)
	if cached == nil {
		r.Expectations.Forget(key)
		return reconcile.Result{}, nil
	}
	rs, err := podutil.Clone(cached)
	if err != nil {
		return reconcile.Result{}, err
	}
	sel, err := labels.FromLabelSelector(rs.Spec.Selector)
	if err != nil {
		return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("replicaset %s: invalid selector: %w", key, err))
	}
	// Check expectations before reading pods: observations that arrive after
	// this point are already in the cache we read next.
	needsManage := r.Expectations.Satisfied(key) && rs.DeletionTimestamp == nil

	var active []*corev1.Pod
	for _, p := range r.ListPods(rs.Namespace) {
		if podutil.IsActive(p) {
			active = append(active, p)
		}
	}
	pods, claimErr := r.claimPods(ctx, rs, sel, active)

	var manageErr error
	if needsManage && claimErr == nil {
		manageErr = r.manageReplicas(ctx, rs, pods)
	}
	status, wait := calculateStatus(rs, pods, manageErr, r.Now())
	if err := r.writeStatus(ctx, rs, status); err != nil {
		return reconcile.Result{}, errors.Join(claimErr, manageErr, err)
	}
	if err := errors.Join(claimErr, manageErr); err != nil {
		return reconcile.Result{}, err
	}
	if wait > 0 {
		logr.FromContextOrDiscard(ctx).V(1).Info("requeue for availability", "after", wait)
		return reconcile.Result{RequeueAfter: wait + 10*time.Millisecond}, nil
	}
	return reconcile.Result{}, nil
}
