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

// reconciler syncs the Endpoints of one Service; dependencies are functions
// so unit tests stub them.
type reconciler struct {
	getService   func(key client.ObjectKey) (*corev1.Service, bool)
	listPods     func(namespace string) []*corev1.Pod
	getEndpoints func(key client.ObjectKey) (*corev1.Endpoints, bool)
	create       func(ctx context.Context, e *corev1.Endpoints) error
	update       func(ctx context.Context, e *corev1.Endpoints) error
	delete       func(ctx context.Context, key client.ObjectKey) error
	event        func(ctx context.Context, obj api.Object, typ, reason, msg string)
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile makes the Endpoints of the Service req names match its pods.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	svc, ok := r.getService(req.ObjectKey)
	if !ok {
		// Like Kubernetes: the Service is gone, so are its Endpoints.
		if _, exists := r.getEndpoints(req.ObjectKey); !exists {
			return reconcile.Result{}, nil
		}
		if err := r.delete(ctx, req.ObjectKey); err != nil {
			return reconcile.Result{}, fmt.Errorf("delete endpoints %s: %w", req.ObjectKey, err)
		}
		return reconcile.Result{}, nil
	}
	if len(svc.Spec.Selector) == 0 || svc.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	subsets, truncated := desiredSubsets(svc, r.listPods(svc.Namespace), MaxAddresses)
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

	cur, exists := r.getEndpoints(req.ObjectKey)
	var want *corev1.Endpoints
	if exists {
		var err error
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
		if err := r.create(ctx, want); err != nil {
			if !apierrors.IsAlreadyExists(err) { // a stale cache: the retry sees it
				r.event(ctx, svc, record.Warning, ReasonFailedToCreateEndpoint,
					fmt.Sprintf("Failed to create endpoint for service %s/%s: %v", svc.Namespace, svc.Name, err))
			}
			return reconcile.Result{}, fmt.Errorf("create endpoints %s: %w", req.ObjectKey, err)
		}
		return reconcile.Result{}, nil
	}
	if err := r.update(ctx, want); err != nil {
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			r.event(ctx, svc, record.Warning, ReasonFailedToUpdateEndpoint,
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
