package endpointslice

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/record"
)

// staleCacheRequeue is how long to wait when the store misses our own writes.
const staleCacheRequeue = time.Second

// Event reasons.
const (
	ReasonFailedToUpdateEndpointSlices = "FailedToUpdateEndpointSlices"
)

// reader reads Services, pods, nodes and EndpointSlices from the informer
// cache (manager.Reader).
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

// writer writes EndpointSlices (client.Client).
type writer interface {
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error
	Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error
}

// recorder records events (record.Recorder).
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// reconciler syncs the slices of one Service from the cache; the tracker
// holds it back while the cache misses its own slice writes.
type reconciler struct {
	maxPerSlice int
	tracker     *tracker

	reader   reader
	client   writer
	recorder recorder
}

// slicesOf lists the slices this controller manages for the Service ns/name.
func (r *reconciler) slicesOf(ctx context.Context, ns, name string) ([]*discoveryv1.EndpointSlice, error) {
	l := &discoveryv1.EndpointSliceList{}
	err := r.reader.List(ctx, l, client.InNamespace(ns),
		client.MatchingLabels{discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: ControllerName})
	if err != nil {
		return nil, fmt.Errorf("list endpointslices of %s/%s: %w", ns, name, err)
	}
	out := make([]*discoveryv1.EndpointSlice, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out, nil
}

// zones returns a lookup of node zones that reads each node once.
func (r *reconciler) zones(ctx context.Context) func(node string) (string, bool) {
	type zone struct {
		name string
		ok   bool
	}
	seen := map[string]zone{}
	return func(node string) (string, bool) {
		if z, ok := seen[node]; ok {
			return z.name, z.ok
		}
		var z zone
		n := &corev1.Node{}
		if err := r.reader.Get(ctx, client.ObjectKey{Name: node}, n); err == nil {
			z.name, z.ok = n.Labels[LabelZone]
		}
		seen[node] = z
		return z.name, z.ok
	}
}

// delete deletes s if it is still the slice of that uid.
func (r *reconciler) delete(ctx context.Context, s *discoveryv1.EndpointSlice) error {
	return client.IgnoreNotFound(r.client.Delete(ctx, s, client.Preconditions{UID: api.Ptr(s.UID)}))
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile makes the managed slices of the Service req names match its pods.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	svc := &corev1.Service{}
	err := r.reader.Get(ctx, req.ObjectKey, svc)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("get service %s: %w", req.ObjectKey, err)
	}
	ok := err == nil
	existing, err := r.slicesOf(ctx, req.Namespace, req.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	key := req.ObjectKey.String()
	if !r.tracker.satisfied(key, existing) {
		// The store misses some of our writes; their events will enqueue
		// the Service again (the requeue is a safety net).
		log.V(1).Info("Endpoint slice cache is stale, waiting")
		return reconcile.Result{RequeueAfter: staleCacheRequeue}, nil
	}
	if !ok || svc.DeletionTimestamp != nil {
		// The Service is gone: its slices go too (GC would do it through the
		// ownerReference; doing it here does not depend on GC running).
		var errs []error
		for _, s := range existing {
			if err := r.delete(ctx, s); err != nil {
				errs = append(errs, fmt.Errorf("delete endpointslice %s/%s: %w", s.Namespace, s.Name, err))
			}
		}
		if len(errs) == 0 {
			r.tracker.forget(key)
		}
		return reconcile.Result{}, errors.Join(errs...)
	}
	if len(svc.Spec.Selector) == 0 {
		return reconcile.Result{}, nil // not ours: endpoints of selector-less services are managed by users
	}
	// Only slices this Service controls (a recreated Service gets new ones;
	// slices of an old incarnation are replaced).
	var owned []*discoveryv1.EndpointSlice
	var stale []*discoveryv1.EndpointSlice
	for _, s := range existing {
		if controlledBy(s, svc) {
			owned = append(owned, s)
		} else {
			stale = append(stale, s)
		}
	}
	pods := &corev1.PodList{}
	if err := r.reader.List(ctx, pods, client.InNamespace(svc.Namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("list pods of service %s: %w", req.ObjectKey, err)
	}
	podPtrs := make([]*corev1.Pod, len(pods.Items))
	for i := range pods.Items {
		podPtrs[i] = &pods.Items[i]
	}
	groups := desiredGroups(svc, podPtrs, r.zones(ctx))
	plan, err := planSlices(svc, groups, owned, r.maxPerSlice)
	if err != nil {
		return reconcile.Result{}, err
	}
	plan.delete = append(plan.delete, stale...)
	if plan.empty() {
		return reconcile.Result{}, nil
	}
	log.V(1).Info("Syncing endpoint slices", "create", len(plan.create), "update", len(plan.update), "delete", len(plan.delete))
	if err := r.apply(ctx, key, plan); err != nil {
		r.recorder.Event(ctx, svc, record.Warning, ReasonFailedToUpdateEndpointSlices,
			fmt.Sprintf("Error updating Endpoint Slices for Service %s/%s: %v", svc.Namespace, svc.Name, err))
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

// apply writes the plan: creates and updates before deletes, so consumers
// never see fewer endpoints than necessary in between.
func (r *reconciler) apply(ctx context.Context, key string, plan slicePlan) error {
	var errs []error
	for _, s := range plan.create {
		if err := r.client.Create(ctx, s); err != nil {
			errs = append(errs, fmt.Errorf("create endpointslice for %s/%s: %w", s.Namespace, s.Labels[discoveryv1.LabelServiceName], err))
			continue
		}
		r.tracker.wrote(key, s)
	}
	for _, s := range plan.update {
		if err := r.client.Update(ctx, s); err != nil {
			errs = append(errs, fmt.Errorf("update endpointslice %s/%s: %w", s.Namespace, s.Name, err))
			continue
		}
		r.tracker.wrote(key, s)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, s := range plan.delete {
		if err := r.delete(ctx, s); err != nil {
			errs = append(errs, fmt.Errorf("delete endpointslice %s/%s: %w", s.Namespace, s.Name, err))
			continue
		}
		r.tracker.deleted(key, s)
	}
	return errors.Join(errs...)
}

// controlledBy reports whether svc is the controller owner of s.
func controlledBy(s *discoveryv1.EndpointSlice, svc *corev1.Service) bool {
	ref := controllerutil.GetControllerOf(s)
	return ref != nil && ref.Kind == "Service" && ref.UID == svc.UID
}
