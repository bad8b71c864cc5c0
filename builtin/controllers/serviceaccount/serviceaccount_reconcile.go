package serviceaccount

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

// reader reads namespaces and ServiceAccounts from the informer cache
// (manager.Reader).
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
}

// writer creates ServiceAccounts (client.Client).
type writer interface {
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
}

// recorder records events (record.Recorder).
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// reconciler ensures the default ServiceAccount of one namespace.
type reconciler struct {
	reader   reader
	client   writer
	recorder recorder
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile creates the namespace's default ServiceAccount when it is missing
// and the namespace is active.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ns := &corev1.Namespace{}
	err := r.reader.Get(ctx, client.ObjectKey{Name: req.Name}, ns)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get namespace %s: %w", req.Name, err)
	}
	if ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating {
		return reconcile.Result{}, nil
	}
	// A ServiceAccount created since the cache last heard of it makes the
	// create below answer AlreadyExists, which is success.
	err = r.reader.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: DefaultName}, &corev1.ServiceAccount{})
	if err == nil {
		return reconcile.Result{}, nil
	}
	if !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("get serviceaccount %s/%s: %w", ns.Name, DefaultName, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: api.ObjectMeta{Namespace: ns.Name, Name: DefaultName}}
	err = r.client.Create(ctx, sa)
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
		return reconcile.Result{}, nil
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
		// The namespace started terminating or went away meanwhile.
		return reconcile.Result{}, nil
	}
	r.recorder.Event(ctx, ns, "Warning", "FailedCreate", fmt.Sprintf("Failed to create ServiceAccount %s: %v", DefaultName, err))
	return reconcile.Result{}, fmt.Errorf("create serviceaccount %s/%s: %w", ns.Name, DefaultName, err)
}
