package statefulset

import (
	"context"
	"fmt"
	"time"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/manager"
)

// ControllerName is the controller's name (also the event source component).
const ControllerName = "statefulset-controller"

// Options configure the controller. The zero value means defaults.
type Options struct {
	// Now returns the current time (default time.Now).
	Now func() time.Time
	// MaxConcurrentReconciles is the number of workers (default 2).
	MaxConcurrentReconciles int
}

// Setup adds the StatefulSet controller with default options to mgr.
func Setup(mgr *manager.Manager) error { return New(mgr, Options{}) }

// New adds the StatefulSet controller with opts to mgr.
func New(mgr *manager.Manager, opts Options) error {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = 2
	}
	c := mgr.Client()
	rec := mgr.EventRecorder(ControllerName)
	r := &reconciler{
		now: opts.Now,
		getStatefulSet: func(ctx context.Context, key client.ObjectKey) (*appsv1.StatefulSet, error) {
			s := &appsv1.StatefulSet{}
			if err := c.Get(ctx, key, s); err != nil {
				return nil, err
			}
			return s, nil
		},
		listPods: func(ctx context.Context, ns string, sel labels.Selector) ([]corev1.Pod, error) {
			l := &corev1.PodList{}
			if err := c.List(ctx, l, client.InNamespace(ns), client.MatchingLabelSelector{Selector: sel}); err != nil {
				return nil, err
			}
			return l.Items, nil
		},
		listRevisions: func(ctx context.Context, ns string) ([]appsv1.ControllerRevision, error) {
			l := &appsv1.ControllerRevisionList{}
			if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
				return nil, err
			}
			return l.Items, nil
		},
		createRevision: func(ctx context.Context, cr *appsv1.ControllerRevision) error { return c.Create(ctx, cr) },
		updateRevision: func(ctx context.Context, cr *appsv1.ControllerRevision) error { return c.Update(ctx, cr) },
		deleteRevision: func(ctx context.Context, cr *appsv1.ControllerRevision) error {
			return client.IgnoreNotFound(c.Delete(ctx, cr))
		},
		getClaim: func(ctx context.Context, key client.ObjectKey) (*corev1.PersistentVolumeClaim, error) {
			pvc := &corev1.PersistentVolumeClaim{}
			if err := c.Get(ctx, key, pvc); err != nil {
				return nil, err
			}
			return pvc, nil
		},
		createClaim: func(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error { return c.Create(ctx, pvc) },
		updateClaim: func(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error { return c.Update(ctx, pvc) },
		createPod:   func(ctx context.Context, p *corev1.Pod) error { return c.Create(ctx, p) },
		deletePod: func(ctx context.Context, p *corev1.Pod) error {
			return client.IgnoreNotFound(c.Delete(ctx, p, client.Preconditions{UID: &p.UID}))
		},
		updateStatus: func(ctx context.Context, s *appsv1.StatefulSet) error { return c.Status().Update(ctx, s) },
		event: func(ctx context.Context, obj api.Object, typ, reason, msg string) {
			rec.Event(ctx, obj, typ, reason, msg)
		},
	}
	err := builder.ControllerManagedBy(mgr).
		Named("statefulset").
		For(builder.Kind[*appsv1.StatefulSet]()).
		Owns(builder.Kind[*corev1.Pod]()).
		Owns(builder.Kind[*appsv1.ControllerRevision]()).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, Logger: mgr.Logger()}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("build statefulset controller: %w", err)
	}
	return nil
}
