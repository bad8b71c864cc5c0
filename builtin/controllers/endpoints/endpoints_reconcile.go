package endpoints

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/record"
)

// Event reasons.
const (
	ReasonFailedToCreateEndpoint = "FailedToCreateEndpoint"
	ReasonFailedToUpdateEndpoint = "FailedToUpdateEndpoint"
)

// reader reads Services, pods and Endpoints from the informer cache
// (manager.Reader).
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

// writer writes Endpoints (client.Client).
type writer interface {
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error
	Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error
}

// recorder records events (record.Recorder).
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// reconciler syncs the Endpoints of one Service from the cache: a create the
// cache does not show yet answers AlreadyExists, an update from a stale
// Endpoints a Conflict, and the retry sees the cache caught up.
type reconciler struct {
	reader   reader
	client   writer
	recorder recorder
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile makes the Endpoints of the Service req names match its pods.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	svc := &corev1.Service{}
	if err := r.reader.Get(ctx, req.ObjectKey, svc); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("get service %s: %w", req.ObjectKey, err)
		}
		// Like Kubernetes: the Service is gone, so are the Endpoints this
		// controller wrote for it. Endpoints written by others without a
		// Service (custom Endpoints, also before their Service exists) are
		// theirs: Kubernetes' controller does not react to their creation.
		cur := &corev1.Endpoints{}
		if err := r.reader.Get(ctx, req.ObjectKey, cur); apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		if cur.Labels[LabelManagedBy] != ControllerName {
			return reconcile.Result{}, nil
		}
		if err := client.IgnoreNotFound(r.client.Delete(ctx, cur)); err != nil {
			return reconcile.Result{}, fmt.Errorf("delete endpoints %s: %w", req.ObjectKey, err)
		}
		return reconcile.Result{}, nil
	}
	if len(svc.Spec.Selector) == 0 || svc.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	pods := &corev1.PodList{}
	if err := r.reader.List(ctx, pods, client.InNamespace(svc.Namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("list pods of service %s: %w", req.ObjectKey, err)
	}
	podPtrs := make([]*corev1.Pod, len(pods.Items))
	for i := range pods.Items {
		podPtrs[i] = &pods.Items[i]
	}
	subsets, truncated := desiredSubsets(svc, podPtrs, MaxAddresses)
	lbls := maps.Clone(svc.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[LabelManagedBy] = ControllerName
	if svc.Spec.ClusterIP == clusterIPNone {
		lbls[LabelHeadless] = ""
	} else {
		delete(lbls, LabelHeadless)
	}

	cur := &corev1.Endpoints{}
	err := r.reader.Get(ctx, req.ObjectKey, cur)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("get endpoints %s: %w", req.ObjectKey, err)
	}
	exists := err == nil
	var want *corev1.Endpoints
	if exists {
		if want, err = copyEndpoints(cur); err != nil {
			return reconcile.Result{}, err
		}
	} else {
		want = &corev1.Endpoints{ObjectMeta: api.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name}}
	}
	want.Labels = lbls
	want.Subsets = subsets
	if truncated {
		if want.Annotations == nil {
			want.Annotations = map[string]string{}
		}
		want.Annotations[AnnotationOverCapacity] = "truncated"
	} else {
		delete(want.Annotations, AnnotationOverCapacity)
	}
	if exists && maps.Equal(cur.Labels, want.Labels) && maps.Equal(cur.Annotations, want.Annotations) &&
		gocmp.Equal(cur.Subsets, want.Subsets, cmpopts.EquateEmpty()) {
		return reconcile.Result{}, nil
	}
	if !exists {
		if err := r.client.Create(ctx, want); err != nil {
			if !apierrors.IsAlreadyExists(err) { // a stale cache: the retry sees it
				r.recorder.Event(ctx, svc, record.Warning, ReasonFailedToCreateEndpoint,
					fmt.Sprintf("Failed to create endpoint for service %s/%s: %v", svc.Namespace, svc.Name, err))
			}
			return reconcile.Result{}, fmt.Errorf("create endpoints %s: %w", req.ObjectKey, err)
		}
		return reconcile.Result{}, nil
	}
	if err := r.client.Update(ctx, want); err != nil {
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			r.recorder.Event(ctx, svc, record.Warning, ReasonFailedToUpdateEndpoint,
				fmt.Sprintf("Failed to update endpoint %s/%s: %v", svc.Namespace, svc.Name, err))
		}
		return reconcile.Result{}, fmt.Errorf("update endpoints %s: %w", req.ObjectKey, err)
	}
	return reconcile.Result{}, nil
}

// copyEndpoints deep-copies e (the framework's types have no DeepCopy).
func copyEndpoints(e *corev1.Endpoints) (*corev1.Endpoints, error) {
	raw, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("copy endpoints %s/%s: %w", e.Namespace, e.Name, err)
	}
	out := &corev1.Endpoints{}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("copy endpoints %s/%s: %w", e.Namespace, e.Name, err)
	}
	return out, nil
}
