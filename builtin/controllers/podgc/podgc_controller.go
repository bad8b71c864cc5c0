package podgc

import (
	"context"
	"fmt"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/workqueue"
)

// Name is the controller's name in builtin/controllers.
const Name = "podgc"

// Defaults of Options (Kubernetes' kube-controller-manager defaults).
const (
	DefaultPeriod                 = 20 * time.Second
	DefaultQuarantine             = 40 * time.Second
	DefaultTerminatedPodThreshold = 12500
)

// Options configure the controller; the zero value means defaults.
type Options struct {
	// Period is the time between two passes (default 20s).
	Period time.Duration
	// Quarantine is how long a node must be missing before its pods are
	// garbage collected (default 40s).
	Quarantine time.Duration
	// TerminatedPodThreshold is the number of terminated pods above which
	// the oldest are deleted (default 12500; negative disables the
	// collection of terminated pods).
	TerminatedPodThreshold int
	// Now is the clock (default time.Now); tests may stub it.
	Now func() time.Time
}

func (o *Options) complete() {
	if o.Period <= 0 {
		o.Period = DefaultPeriod
	}
	if o.Quarantine <= 0 {
		o.Quarantine = DefaultQuarantine
	}
	if o.TerminatedPodThreshold == 0 {
		o.TerminatedPodThreshold = DefaultTerminatedPodThreshold
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Setup adds the controller with default options to mgr.
func Setup(mgr *manager.Manager) error { return New(mgr, Options{}) }

// New adds the controller with opts to mgr.
func New(mgr *manager.Manager, opts Options) error {
	opts.complete()
	infs := mgr.Informers()
	pods, err := cache.InformerFor(infs, cache.InformerOptions[*corev1.Pod]{})
	if err != nil {
		return fmt.Errorf("%s: pod informer: %w", Name, err)
	}
	nodes, err := cache.InformerFor(infs, cache.InformerOptions[*corev1.Node]{})
	if err != nil {
		return fmt.Errorf("%s: node informer: %w", Name, err)
	}
	r := &reconciler{
		opts:         opts,
		missingSince: map[string]time.Time{},
		reader:       sharedReader{pods: pods, nodes: nodes},
		client:       mgr.Client(),
		log:          mgr.Logger().WithValues("controller", Name),
	}
	// A failed pass is retried with backoff, but never later than the next
	// periodic pass would run.
	limiter := workqueue.NewItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, opts.Period)
	ctrl, err := controller.New(Name, r, controller.Options{Logger: mgr.Logger(), Registry: mgr.Registry(), RateLimiter: limiter})
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	if err := ctrl.Watch(&tick{syncs: []func(context.Context) bool{pods.WaitForCacheSync, nodes.WaitForCacheSync}}); err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	if err := mgr.Add(ctrl); err != nil {
		return fmt.Errorf("%s: add controller: %w", Name, err)
	}
	return nil
}

// key is the controller's only reconcile request: each reconcile is one pass
// over every pod.
var key = reconcile.Request{ObjectKey: client.ObjectKey{Name: Name}}

// tick is the source of the controller: it adds key once when the controller
// starts (the reconciler then requeues it every Period) and is synced once
// the pod and node informers are.
type tick struct {
	syncs []func(context.Context) bool
}

var (
	_ controller.Source        = (*tick)(nil)
	_ controller.SyncingSource = (*tick)(nil)
)

// Start adds key.
func (t *tick) Start(_ context.Context, q handler.Queue) error {
	q.Add(key)
	return nil
}

// WaitForSync waits for the informers.
func (t *tick) WaitForSync(ctx context.Context) bool {
	for _, s := range t.syncs {
		if !s(ctx) {
			return false
		}
	}
	return true
}

// sharedReader lists the informers' pods and nodes without the deep copy of
// a cache.Reader (a JSON round trip of every pod, each pass): the items are
// shallow copies that share their maps and slices with the cache, which the
// reconciler only reads.
type sharedReader struct {
	pods  *cache.Informer[*corev1.Pod]
	nodes *cache.Informer[*corev1.Node]
}

func (s sharedReader) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	switch l := list.(type) {
	case *corev1.PodList:
		pods := s.pods.Store().List()
		l.Items = make([]corev1.Pod, len(pods))
		for i, p := range pods {
			l.Items[i] = *p
		}
	case *corev1.NodeList:
		nodes := s.nodes.Store().List()
		l.Items = make([]corev1.Node, len(nodes))
		for i, n := range nodes {
			l.Items[i] = *n
		}
	default:
		return fmt.Errorf("%s: list %T from the informers: not a pod or node list", Name, list)
	}
	return nil
}
