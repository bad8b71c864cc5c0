package job

import (
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
)

// ControllerName is the controller's name (also the event source component).
const ControllerName = "job-controller"

// Default backoff between pod recreations after failures, like Kubernetes.
const (
	DefaultBackoffBase = 10 * time.Second
	DefaultBackoffMax  = 6 * time.Minute
)

// Options configure the controller. The zero value means defaults.
type Options struct {
	// BackoffBase is the delay before recreating a pod after the first
	// failure; it doubles with every further consecutive failure
	// (default DefaultBackoffBase).
	BackoffBase time.Duration
	// BackoffMax caps the delay (default DefaultBackoffMax).
	BackoffMax time.Duration
	// Now returns the current time (default time.Now).
	Now func() time.Time
	// MaxConcurrentReconciles is the number of workers (default 2).
	MaxConcurrentReconciles int
}

func (o Options) complete() Options {
	if o.BackoffBase <= 0 {
		o.BackoffBase = DefaultBackoffBase
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = DefaultBackoffMax
	}
	if o.BackoffMax < o.BackoffBase {
		o.BackoffMax = o.BackoffBase
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 2
	}
	return o
}

// removeFinalizerPatch removes the tracking finalizer whatever else the pod's
// finalizers are.
const removeFinalizerPatch = `{"metadata":{"$deleteFromPrimitiveList/finalizers":["` + batchv1.JobTrackingFinalizer + `"]}}`

// addFinalizerPatch adds the tracking finalizer to the pod's finalizers
// (finalizers merge in a strategic merge patch).
const addFinalizerPatch = `{"metadata":{"finalizers":["` + batchv1.JobTrackingFinalizer + `"]}}`

// orphanPodJob maps a pod that still carries the tracking finalizer but has no
// controller (the garbage collector orphaned it) to the Job named by its
// batch.kubernetes.io/job-name label, whose reconcile releases it.
func orphanPodJob(_ context.Context, obj api.Object) []reconcile.Request {
	if !slices.Contains(obj.GetFinalizers(), batchv1.JobTrackingFinalizer) {
		return nil
	}
	if controllerutil.HasControllerReference(obj) {
		return nil
	}
	name := obj.GetLabels()[batchv1.JobNameLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{ObjectKey: client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}}}
}

// Setup adds the Job controller with default options to mgr.
func Setup(mgr *manager.Manager) error { return New(mgr, Options{}) }

// New adds the Job controller with opts to mgr.
func New(mgr *manager.Manager, opts Options) error {
	opts = opts.complete()
	r := &reconciler{
		now:         opts.Now,
		backoffBase: opts.BackoffBase,
		backoffMax:  opts.BackoffMax,
		reader:      mgr.Reader(),
		client:      mgr.Client(),
		recorder:    mgr.EventRecorder(ControllerName),
		expect:      newExpectations(),
	}
	err := builder.ControllerManagedBy(mgr).
		Named("job").
		For(builder.Kind[*batchv1.Job]()).
		Owns(builder.Kind[*corev1.Pod]()).
		Watches(builder.Kind[*corev1.Pod](), handler.EnqueueRequestsFromMapFunc(orphanPodJob)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, Logger: mgr.Logger()}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("build job controller: %w", err)
	}
	return nil
}
