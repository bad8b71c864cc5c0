package namespace

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

// reader reads namespaces from the informer cache (manager.Reader).
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
}

// writer writes a namespace's status and its finalize subresource
// (client.Client). A write from a stale cached namespace fails with a
// Conflict and is retried.
type writer interface {
	Status() client.StatusWriter
	SubResource(name string) client.SubResourceClient
}

// content lists and deletes what a namespace holds, on the server
// (client.Client): any kind the server serves, which no informer caches, read
// fresh right before deleting it.
type content interface {
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
	Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error
	DeleteAllOf(ctx context.Context, obj api.Object, opts ...client.DeleteAllOfOption) error
}

// discoverer lists the namespaced resources that support list and delete.
type discoverer interface {
	Discover(ctx context.Context) ([]resource, error)
}

// recorder records events (record.Recorder).
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// reconciler drives one Namespace.
type reconciler struct {
	reader     reader
	client     writer
	content    content
	discoverer discoverer
	recorder   recorder
	// requeueAfter is how soon a namespace with remaining content is looked at again.
	requeueAfter time.Duration
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile empties and finalizes a terminating namespace.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ns := &corev1.Namespace{}
	err := r.reader.Get(ctx, client.ObjectKey{Name: req.Name}, ns)
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
	if err := r.client.Status().Update(ctx, ns); err != nil {
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
	if err := r.client.SubResource("finalize").Update(ctx, ns, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) {
			r.recorder.Event(ctx, ns, "Warning", "FailedFinalize", fmt.Sprintf("Failed to finalize the namespace: %v", err))
		}
		return fmt.Errorf("finalize namespace %s: %w", ns.Name, err)
	}
	return nil
}
