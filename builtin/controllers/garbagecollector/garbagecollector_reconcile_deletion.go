package garbagecollector

import (
	"context"
	"fmt"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/reconcile"
)

// reconcileForeground finishes the foreground deletion of owner: its
// dependents are deleted by their own reconciles (they see a waiting owner);
// here the foregroundDeletion finalizer is removed once no dependent with
// blockOwnerDeletion remains.
func (r *reconciler) reconcileForeground(ctx context.Context, owner *node) (reconcile.Result, error) {
	if !r.synced.allSynced() {
		return reconcile.Result{RequeueAfter: notSyncedDelay}, nil
	}
	for _, d := range r.graph.dependentsOf(owner.UID) {
		if ref, ok := d.ownerRef(owner.UID); ok && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
			return reconcile.Result{RequeueAfter: waitingDelay}, nil
		}
	}
	return reconcile.Result{}, r.removeFinalizer(ctx, owner, api.FinalizerDeleteDependents)
}

// reconcileOrphan removes the ownerReference to owner from every dependent,
// then the orphan finalizer from owner.
func (r *reconciler) reconcileOrphan(ctx context.Context, owner *node) (reconcile.Result, error) {
	if !r.synced.allSynced() {
		return reconcile.Result{RequeueAfter: notSyncedDelay}, nil
	}
	for _, d := range r.graph.dependentsOf(owner.UID) {
		if err := r.orphan(ctx, d, owner); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, r.removeFinalizer(ctx, owner, api.FinalizerOrphanDependents)
}

// orphan removes the reference to owner from the live dependent d.
func (r *reconciler) orphan(ctx context.Context, d, owner *node) error {
	obj := d.object()
	if err := r.objects.Get(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get dependent %s %s: %w", d.Kind, key(d), err)
	}
	if obj.GetUID() != d.UID {
		return nil
	}
	refs := obj.GetOwnerReferences()
	kept := refs[:0:0]
	for _, ref := range refs {
		if ref.UID != owner.UID {
			kept = append(kept, ref)
		}
	}
	if len(kept) == len(refs) {
		return nil
	}
	obj.SetOwnerReferences(kept)
	if err := r.objects.Update(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) {
			r.recorder.Event(ctx, owner.object(), "Warning", reasonFailedOrphan,
				fmt.Sprintf("garbage collector failed to orphan dependent %s %s: %v", d.Kind, key(d), err))
		}
		return fmt.Errorf("orphan %s %s: %w", d.Kind, key(d), err)
	}
	return nil
}

// removeFinalizer removes finalizer from the live object of n (if it is still
// the same object).
func (r *reconciler) removeFinalizer(ctx context.Context, n *node, finalizer string) error {
	obj := n.object()
	if err := r.objects.Get(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get %s %s: %w", n.Kind, key(n), err)
	}
	if obj.GetUID() != n.UID || !controllerutil.RemoveFinalizer(obj, finalizer) {
		return nil
	}
	if err := r.objects.Update(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) {
			r.recorder.Event(ctx, obj, "Warning", reasonFailedRemoveFinalizer,
				fmt.Sprintf("garbage collector failed to remove finalizer %s: %v", finalizer, err))
		}
		return fmt.Errorf("remove finalizer %s from %s %s: %w", finalizer, n.Kind, key(n), err)
	}
	return nil
}
