package serviceaccount

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/reconcile"
)

// reconciler ensures the default ServiceAccount of one namespace. Its
// dependencies are functions so tests can stub them.
type reconciler struct {
	getNamespace      func(ctx context.Context, name string) (*corev1.Namespace, error)
	getServiceAccount func(ctx context.Context, namespace, name string) error
	create            func(ctx context.Context, sa *corev1.ServiceAccount) error
	event             func(ctx context.Context, obj api.Object, eventType, reason, message string)
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile creates the namespace's default ServiceAccount when it is missing
// and the namespace is active.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ns, err := r.getNamespace(ctx, req.Name)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get namespace %s: %w", req.Name, err)
	}
	if ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating {
		return reconcile.Result{}, nil
	}
	err = r.getServiceAccount(ctx, ns.Name, DefaultName)
	if err == nil {
		return reconcile.Result{}, nil
	}
	if !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("get serviceaccount %s/%s: %w", ns.Name, DefaultName, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: api.ObjectMeta{Namespace: ns.Name, Name: DefaultName}}
	err = r.create(ctx, sa)
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
		return reconcile.Result{}, nil
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
		// The namespace started terminating or went away meanwhile.
		return reconcile.Result{}, nil
	}
	r.event(ctx, ns, "Warning", "FailedCreate", fmt.Sprintf("Failed to create ServiceAccount %s: %v", DefaultName, err))
	return reconcile.Result{}, fmt.Errorf("create serviceaccount %s/%s: %w", ns.Name, DefaultName, err)
}
