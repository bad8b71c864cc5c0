package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"time"

	autoscalingv2 "github.com/converge-dev/converge/builtin/api/autoscaling/v2"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/manager"
)

// Name is the controller's name (kube-controller-manager's
// "horizontalpodautoscaling").
const Name = "horizontalpodautoscaling"

// eventSource is the component its events are reported by.
const eventSource = "horizontal-pod-autoscaler"

// Options configure the controller; the zero value means Kubernetes'
// defaults. Each field is a kube-controller-manager flag.
type Options struct {
	// SyncPeriod is how often each autoscaler is reconciled
	// (--horizontal-pod-autoscaler-sync-period, 15 s).
	SyncPeriod time.Duration
	// DownscaleStabilization is the scale-down stabilization window of
	// autoscalers that do not set one
	// (--horizontal-pod-autoscaler-downscale-stabilization, 5 min).
	DownscaleStabilization time.Duration
	// Tolerance is the usage ratio change ignored
	// (--horizontal-pod-autoscaler-tolerance, 0.1).
	Tolerance float64
	// CPUInitializationPeriod: CPU samples of younger pods count only once
	// they are ready and measured for a window since
	// (--horizontal-pod-autoscaler-cpu-initialization-period, 5 min).
	CPUInitializationPeriod time.Duration
	// InitialReadinessDelay: an older pod's readiness change within this
	// delay of its start counts as initial
	// (--horizontal-pod-autoscaler-initial-readiness-delay, 30 s).
	InitialReadinessDelay time.Duration
	// MaxConcurrentReconciles is the number of workers (default 5,
	// --concurrent-horizontal-pod-autoscaler-syncs).
	MaxConcurrentReconciles int
	// Now returns the current time (default time.Now).
	Now func() time.Time
}

func (o Options) complete() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.SyncPeriod, 15*time.Second)
	def(&o.DownscaleStabilization, 5*time.Minute)
	def(&o.CPUInitializationPeriod, 5*time.Minute)
	def(&o.InitialReadinessDelay, 30*time.Second)
	if o.Tolerance <= 0 {
		o.Tolerance = 0.1
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 5
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// reader reads autoscalers from the cache.
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
}

// podLister reads the target's pods from the cache without copies.
type podLister interface {
	List(ctx context.Context, opts ...client.ListOption) ([]*corev1.Pod, error)
}

// scaler reads and writes the target's scale subresource. It goes to the
// server: the target may be any kind with a scale subresource (custom
// resources included), which no informer of this controller caches.
type scaler interface {
	Get(ctx context.Context, obj, sub api.Object) error
	Update(ctx context.Context, obj, sub api.Object, opts ...client.UpdateOption) error
}

// metricsLister lists metrics.k8s.io PodMetrics (served by the API server,
// never cached).
type metricsLister interface {
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

// statusWriter writes autoscaler status.
type statusWriter interface {
	Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error
}

// recorder reports events on autoscalers.
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// Setup adds the controller with default options to mgr.
func Setup(mgr *manager.Manager) error { return New(mgr, Options{}) }

// New adds the controller with opts to mgr.
func New(mgr *manager.Manager, opts Options) error {
	opts = opts.complete()
	pods, err := cache.ListerFor[*corev1.Pod](mgr.Informers())
	if err != nil {
		return fmt.Errorf("%s: pod lister: %w", Name, err)
	}
	c := mgr.Client()
	r := &reconciler{
		opts: opts, reader: mgr.Reader(), pods: pods, scale: c.SubResource("scale"), metrics: c,
		status: c.Status(), recorder: mgr.EventRecorder(eventSource), history: newHistory(),
		calc: calculator{tolerance: opts.Tolerance, cpuInitializationPeriod: opts.CPUInitializationPeriod,
			delayOfInitialReadinessStatus: opts.InitialReadinessDelay},
	}
	err = builder.ControllerManagedBy(mgr).
		Named(Name).
		For(builder.Kind[*autoscalingv2.HorizontalPodAutoscaler]()).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, Logger: mgr.Logger()}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("build %s controller: %w", Name, err)
	}
	return nil
}

var errNoSelector = errors.New("the HPA target's scale is missing a selector")
