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
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/record"
)

// staleCacheRequeue is how long to wait when the store misses our own writes.
const staleCacheRequeue = time.Second

// Event reasons.
const (
	ReasonFailedToUpdateEndpointSlices = "FailedToUpdateEndpointSlices"
)

// reconciler syncs the slices of one Service. Its dependencies are functions
// so unit tests stub them; reads come from the shared informers' stores.
type reconciler struct {
	maxPerSlice int
	tracker     *tracker

	getService func(key client.ObjectKey) (*corev1.Service, bool)
	listPods   func(namespace string) []*corev1.Pod
	zoneOf     func(node string) (string, bool)
	listSlices func(namespace, service string) []*discoveryv1.EndpointSlice

	create func(ctx context.Context, s *discoveryv1.EndpointSlice) error
	update func(ctx context.Context, s *discoveryv1.EndpointSlice) error
	delete func(ctx context.Context, s *discoveryv1.EndpointSlice) error
	event  func(ctx context.Context, obj api.Object, typ, reason, msg string)
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile makes the managed slices of the Service req names match its pods.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	svc, ok := r.getService(req.ObjectKey)
	existing := r.listSlices(req.Namespace, req.Name)
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
	groups := desiredGroups(svc, r.listPods(svc.Namespace), r.zoneOf)
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
		r.event(ctx, svc, record.Warning, ReasonFailedToUpdateEndpointSlices,
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
		if err := r.create(ctx, s); err != nil {
			errs = append(errs, fmt.Errorf("create endpointslice for %s/%s: %w", s.Namespace, s.Labels[discoveryv1.LabelServiceName], err))
			continue
		}
		r.tracker.wrote(key, s)
	}
	for _, s := range plan.update {
		if err := r.update(ctx, s); err != nil {
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
	for _, ref := range s.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			return ref.Kind == "Service" && ref.UID == svc.UID
		}
	}
	return false
}
