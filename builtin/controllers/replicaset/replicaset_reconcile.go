package replicaset

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/go-logr/logr"
)

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile brings one ReplicaSet's pods and status in line with its spec.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := req.ObjectKey.String()
	cached, err := r.replicaSets.Get(ctx, req.ObjectKey)
	if apierrors.IsNotFound(err) {
		r.expectations.Forget(key)
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get replicaset %s: %w", key, err)
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
	needsManage := r.expectations.Satisfied(key) && rs.DeletionTimestamp == nil

	all, err := r.pods.List(ctx, client.InNamespace(rs.Namespace))
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("list pods of replicaset %s: %w", key, err)
	}
	var active []*corev1.Pod
	for _, p := range all {
		if podutil.IsActive(p) {
			active = append(active, p)
		}
	}
	pods, claimErr := r.claimPods(ctx, rs, sel, active)

	var manageErr error
	if needsManage && claimErr == nil {
		manageErr = r.manageReplicas(ctx, rs, pods)
	}
	status, wait := calculateStatus(rs, pods, manageErr, r.now())
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
