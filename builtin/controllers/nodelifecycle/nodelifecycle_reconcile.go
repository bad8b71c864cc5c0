package nodelifecycle

import (
	"context"
	"fmt"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
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

// reader reads nodes, Leases and pods from the informer cache
// (manager.Reader); pods are listed by node through the spec.nodeName field
// index (podutil.IndexByNode).
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

// writer patches nodes and pods and evicts pods (client.Client). Patches
// carry the resourceVersion read: one from a stale cache fails with a
// Conflict and the node is reconciled again.
type writer interface {
	Patch(ctx context.Context, obj api.Object, patch client.Patch, opts ...client.PatchOption) error
	Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error
	Status() client.StatusWriter
	SubResource(name string) client.SubResourceClient
}

// recorder records events (record.Recorder).
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// reconciler runs the node lifecycle of one node.
type reconciler struct {
	opts      Options
	limiter   *zoneLimiter
	scheduled *scheduledEvictions

	reader reader
	client writer
	// nodeEvents and podEvents record as the node lifecycle controller and
	// as the taint manager.
	nodeEvents, podEvents recorder
}

// podsOnNode lists the pods bound to the node named name.
func (r *reconciler) podsOnNode(ctx context.Context, name string) ([]*corev1.Pod, error) {
	l := &corev1.PodList{}
	if err := r.reader.List(ctx, l, client.MatchingFields{podutil.NodeNameField: name}); err != nil {
		return nil, fmt.Errorf("list pods of node %s: %w", name, err)
	}
	out := make([]*corev1.Pod, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out, nil
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// step is one aspect of the reconcile; it may replace the node (after a
// write) and asks for a requeue after a duration (0: none).
type step func(ctx context.Context, node *corev1.Node, now time.Time) (*corev1.Node, time.Duration, error)

// Reconcile runs the health, taint and eviction steps for the node req names.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := r.reader.Get(ctx, client.ObjectKey{Name: req.Name}, node); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("get node %s: %w", req.Name, err)
		}
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
