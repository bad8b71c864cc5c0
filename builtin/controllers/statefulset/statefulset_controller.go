package statefulset

import (
	"fmt"
	"time"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/cache"
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
	r := &reconciler{
		now:       opts.Now,
		reader:    mgr.Reader(),
		client:    mgr.Client(),
		revisions: mgr.Client(),
		recorder:  mgr.EventRecorder(ControllerName),
	}
	// Claims are read from the cache too; nothing else watches them here.
	if _, err := cache.InformerFor(mgr.Informers(), cache.InformerOptions[*corev1.PersistentVolumeClaim]{}); err != nil {
		return fmt.Errorf("claim informer: %w", err)
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
