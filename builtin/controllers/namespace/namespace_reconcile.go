package namespace

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/reconcile"
)

// reconciler drives one Namespace. Its dependencies are functions so tests can
// stub them.
type reconciler struct {
	get          func(ctx context.Context, name string) (*corev1.Namespace, error)
	updateStatus func(ctx context.Context, ns *corev1.Namespace) error
	// finalize PUTs namespaces/NAME/finalize.
	finalize func(ctx context.Context, ns *corev1.Namespace) error
	// discover lists the resources supporting list and delete.
	discover         func(ctx context.Context) ([]resource, error)
	deleteCollection func(ctx context.Context, res resource, ns string) error
	list             func(ctx context.Context, res resource, ns string) ([]api.Unstructured, error)
	deleteObject     func(ctx context.Context, obj *api.Unstructured) error
	event            func(ctx context.Context, obj api.Object, eventType, reason, message string)
	// requeueAfter is how soon a namespace with remaining content is looked at again.
	requeueAfter time.Duration
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile empties and finalizes a terminating namespace.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ns, err := r.get(ctx, req.Name)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get namespace %s: %w", req.Name, err)
	}
	if ns.DeletionTimestamp == nil {
		return reconcile.Result{}, nil
	}
	if err := r.setTerminating(ctx, ns); err != nil {
		return reconcile.Result{}, err
	}
	remaining, err := r.deleteContent(ctx, ns)
	if err != nil {
		return reconcile.Result{}, err
	}
	if remaining {
		return reconcile.Result{RequeueAfter: r.requeueAfter}, nil
	}
	return reconcile.Result{}, r.finalizeNamespace(ctx, ns)
}

// setTerminating sets status.phase Terminating.
func (r *reconciler) setTerminating(ctx context.Context, ns *corev1.Namespace) error {
	if ns.Status.Phase == corev1.NamespaceTerminating {
		return nil
	}
	ns.Status.Phase = corev1.NamespaceTerminating
	if err := r.updateStatus(ctx, ns); err != nil {
		return fmt.Errorf("set namespace %s terminating: %w", ns.Name, err)
	}
	return nil
}

// finalizeNamespace removes "kubernetes" from spec.finalizers through the
// finalize subresource, after which the API server deletes the namespace (once
// metadata.finalizers is empty too).
func (r *reconciler) finalizeNamespace(ctx context.Context, ns *corev1.Namespace) error {
	if !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		return nil
	}
	ns.Spec.Finalizers = slices.DeleteFunc(slices.Clone(ns.Spec.Finalizers),
		func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
	if err := r.finalize(ctx, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) {
			r.event(ctx, ns, "Warning", "FailedFinalize", fmt.Sprintf("Failed to finalize the namespace: %v", err))
		}
		return fmt.Errorf("finalize namespace %s: %w", ns.Name, err)
	}
	return nil
}
