package nodelifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "github.com/converge-dev/converge/builtin/api/coordination/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	policyv1 "github.com/converge-dev/converge/builtin/api/policy/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
)

const (
	// Name is the controller's name in builtin/controllers.
	Name = "nodelifecycle"
	// Component is the event source of the node conditions and taints.
	Component = "node-controller"
	// TaintComponent is the event source of taint evictions.
	TaintComponent = "taint-eviction-controller"
	// LeaseNamespace holds the nodes' heartbeat Leases.
	LeaseNamespace = "kube-node-lease"
	// LabelZone is the node label naming its zone.
	LabelZone = "topology.kubernetes.io/zone"
)

// Defaults of Options (Kubernetes' kube-controller-manager defaults).
const (
	DefaultNodeMonitorGracePeriod = 40 * time.Second
	DefaultNodeStartupGracePeriod = 60 * time.Second
	DefaultEvictionRate           = 0.1
	DefaultSecondaryEvictionRate  = 0.01
	DefaultUnhealthyZoneThreshold = 0.55
)

// Options configure the controller; the zero value means defaults.
type Options struct {
	// NodeMonitorGracePeriod is how long a node may go without heartbeat
	// before it is marked Unknown (default 40s).
	NodeMonitorGracePeriod time.Duration
	// NodeStartupGracePeriod is the grace of a node that never reported
	// (default 60s).
	NodeStartupGracePeriod time.Duration
	// EvictionRate is how many nodes per second of a healthy zone get a
	// NoExecute taint (default 0.1).
	EvictionRate float64
	// SecondaryEvictionRate is that rate in a zone where more than 2 nodes
	// and at least UnhealthyZoneThreshold of its nodes are unhealthy (default
	// 0.01; negative means never).
	SecondaryEvictionRate float64
	// UnhealthyZoneThreshold is the fraction of unhealthy nodes above which a
	// zone is disrupted (default 0.55).
	UnhealthyZoneThreshold float64
	// MaxConcurrentReconciles is the number of workers (default 2).
	MaxConcurrentReconciles int
	// Now is the clock (default time.Now); tests may stub it.
	Now func() time.Time
}

func (o *Options) complete() {
	if o.NodeMonitorGracePeriod <= 0 {
		o.NodeMonitorGracePeriod = DefaultNodeMonitorGracePeriod
	}
	if o.NodeStartupGracePeriod <= 0 {
		o.NodeStartupGracePeriod = DefaultNodeStartupGracePeriod
	}
	if o.EvictionRate <= 0 {
		o.EvictionRate = DefaultEvictionRate
	}
	if o.SecondaryEvictionRate == 0 {
		o.SecondaryEvictionRate = DefaultSecondaryEvictionRate
	}
	if o.UnhealthyZoneThreshold <= 0 {
		o.UnhealthyZoneThreshold = DefaultUnhealthyZoneThreshold
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 2
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

func (o *Options) validate() error {
	var errs []error
	if o.UnhealthyZoneThreshold > 1 {
		errs = append(errs, fmt.Errorf("nodelifecycle: UnhealthyZoneThreshold %v is above 1", o.UnhealthyZoneThreshold))
	}
	return errors.Join(errs...)
}

// Setup adds the controller with default options to mgr.
func Setup(mgr *manager.Manager) error { return New(mgr, Options{}) }

// New adds the controller with opts to mgr.
func New(mgr *manager.Manager, opts Options) error {
	opts.complete()
	if err := opts.validate(); err != nil {
		return err
	}
	// Leases are read, not only watched; pods are listed by node.
	if _, err := cache.InformerFor(mgr.Informers(), cache.InformerOptions[*coordinationv1.Lease]{}); err != nil {
		return fmt.Errorf("nodelifecycle: lease informer: %w", err)
	}
	if err := podutil.IndexByNode(mgr.Informers()); err != nil {
		return fmt.Errorf("nodelifecycle: %w", err)
	}
	r := &reconciler{
		opts:       opts,
		limiter:    newZoneLimiter(),
		scheduled:  newScheduledEvictions(),
		reader:     mgr.Reader(),
		client:     mgr.Client(),
		nodeEvents: mgr.EventRecorder(Component),
		podEvents:  mgr.EventRecorder(TaintComponent),
	}
	leaseToNode := func(_ context.Context, obj api.Object) []reconcile.Request {
		if obj.GetNamespace() != LeaseNamespace {
			return nil
		}
		return []reconcile.Request{{ObjectKey: client.ObjectKey{Name: obj.GetName()}}}
	}
	podToNode := func(_ context.Context, obj api.Object) []reconcile.Request {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Spec.NodeName == "" {
			return nil
		}
		return []reconcile.Request{{ObjectKey: client.ObjectKey{Name: p.Spec.NodeName}}}
	}
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(builder.Kind[*corev1.Node]()).
		Watches(builder.Kind[*coordinationv1.Lease](), handler.EnqueueRequestsFromMapFunc(leaseToNode)).
		Watches(builder.Kind[*corev1.Pod](), handler.EnqueueRequestsFromMapFunc(podToNode)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("nodelifecycle: %w", err)
	}
	return nil
}

// evict evicts p through pods/eviction, or deletes it when the server does
// not serve evictions or refuses one (see the package documentation).
func evict(ctx context.Context, c writer, p *corev1.Pod) error {
	ev := &policyv1.Eviction{ObjectMeta: api.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}
	err := c.SubResource("eviction").Create(ctx, p, ev)
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err), apierrors.IsMethodNotSupported(err), apierrors.IsTooManyRequests(err):
		// Not served (or the pod is gone, which the delete tells apart).
	default:
		return fmt.Errorf("evict pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	if err := c.Delete(ctx, p, client.Preconditions{UID: api.Ptr(p.UID)}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}
