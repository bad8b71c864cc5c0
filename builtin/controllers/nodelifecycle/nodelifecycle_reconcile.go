package nodelifecycle

import (
	"context"
	"time"

	coordinationv1 "github.com/converge-dev/converge/builtin/api/coordination/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Event reasons.
const (
	ReasonNodeNotReady          = "NodeNotReady"
	ReasonNodeReady             = "NodeReady"
	ReasonTaintManagerEviction  = "TaintManagerEviction"
	ReasonNodeStatusUnknown     = "NodeStatusUnknown"
	ReasonNodeStatusNeverUpdate = "NodeStatusNeverUpdated"
	MessageNodeStatusUnknown    = "Kubelet stopped posting node status."
	MessageNodeStatusNeverUpd   = "Kubelet never posted node status."
)

// reconciler runs the node lifecycle of one node. Reads come from informer
// stores, writes and events go through function-typed dependencies so unit
// tests stub them.
type reconciler struct {
	opts      Options
	limiter   *zoneLimiter
	scheduled *scheduledEvictions

	getNode    func(name string) (*corev1.Node, bool)
	listNodes  func() []*corev1.Node
	getLease   func(name string) (*coordinationv1.Lease, bool)
	podsOnNode func(name string) []*corev1.Pod

	patchNodeStatus func(ctx context.Context, n *corev1.Node, body []byte) error
	patchNode       func(ctx context.Context, n *corev1.Node, body []byte) error
	patchPodStatus  func(ctx context.Context, p *corev1.Pod, body []byte) error
	evictPod        func(ctx context.Context, p *corev1.Pod) error
	nodeEvent       func(ctx context.Context, obj api.Object, typ, reason, msg string)
	podEvent        func(ctx context.Context, obj api.Object, typ, reason, msg string)
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// step is one aspect of the reconcile; it may replace the node (after a
// write) and asks for a requeue after a duration (0: none).
type step func(ctx context.Context, node *corev1.Node, now time.Time) (*corev1.Node, time.Duration, error)

// Reconcile runs the health, taint and eviction steps for the node req names.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node, ok := r.getNode(req.Name)
	if !ok {
		r.scheduled.forgetNode(req.Name)
		return reconcile.Result{}, nil
	}
	now := r.opts.Now()
	var requeue time.Duration
	for _, s := range []step{r.reconcileHealth, r.reconcileTaints, r.reconcileEviction} {
		n, after, err := s(ctx, node, now)
		if err != nil {
			return reconcile.Result{}, err
		}
		node = n
		if after > 0 && (requeue == 0 || after < requeue) {
			requeue = after
		}
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// readyStatus returns the status of the node's Ready condition ("" if none).
func readyStatus(n *corev1.Node) corev1.ConditionStatus {
	if c := findCondition(n.Status.Conditions, corev1.NodeReady); c != nil {
		return c.Status
	}
	return ""
}

func findCondition(conds []corev1.NodeCondition, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// zoneOf returns the zone of a node ("" when unlabelled).
func zoneOf(n *corev1.Node) string { return n.Labels[LabelZone] }
