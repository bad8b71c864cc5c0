package nodelifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	coordinationv1 "github.com/converge-dev/converge/builtin/api/coordination/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/record"
)

// watchedConditions are the conditions set to Unknown when the node goes
// silent (Kubernetes' nodeConditionsToUpdate).
func watchedConditions() []corev1.NodeConditionType {
	return []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure}
}

// lastHeartbeat returns when the node last showed life and the grace period
// that applies to it.
func (r *reconciler) lastHeartbeat(ctx context.Context, node *corev1.Node) (time.Time, time.Duration) {
	var last time.Time
	reported := false
	if c := findCondition(node.Status.Conditions, corev1.NodeReady); c != nil && !c.LastHeartbeatTime.IsZero() {
		last, reported = c.LastHeartbeatTime.Time, true
	}
	l := &coordinationv1.Lease{}
	if err := r.reader.Get(ctx, client.ObjectKey{Namespace: LeaseNamespace, Name: node.Name}, l); err == nil &&
		l.Spec.RenewTime != nil && !l.Spec.RenewTime.Time.IsZero() {
		if l.Spec.RenewTime.Time.After(last) {
			last = l.Spec.RenewTime.Time
		}
		reported = true
	}
	if !reported {
		return node.CreationTimestamp.Time, r.opts.NodeStartupGracePeriod
	}
	return last, r.opts.NodeMonitorGracePeriod
}

// reconcileHealth marks the node's conditions Unknown once its heartbeat is
// older than the grace period, and marks its pods not ready while Ready is
// not True. It requeues for the moment the heartbeat will expire.
func (r *reconciler) reconcileHealth(ctx context.Context, node *corev1.Node, now time.Time) (*corev1.Node, time.Duration, error) {
	last, grace := r.lastHeartbeat(ctx, node)
	expiry := last.Add(grace)
	if !now.After(expiry) {
		// Alive: come back just after the heartbeat would expire.
		if readyStatus(node) != corev1.ConditionTrue && readyStatus(node) != "" {
			if err := r.markPodsNotReady(ctx, node); err != nil {
				return node, 0, err
			}
		}
		return node, expiry.Sub(now) + 100*time.Millisecond, nil
	}
	if readyStatus(node) != corev1.ConditionUnknown {
		conds := slices.Clone(node.Status.Conditions)
		ts := api.NewTime(now)
		for _, t := range watchedConditions() {
			c := findCondition(conds, t)
			if c == nil {
				conds = append(conds, corev1.NodeCondition{
					Type: t, Status: corev1.ConditionUnknown, Reason: ReasonNodeStatusNeverUpdate,
					Message: MessageNodeStatusNeverUpd, LastHeartbeatTime: ts, LastTransitionTime: ts,
				})
				continue
			}
			if c.Status != corev1.ConditionUnknown {
				c.Status, c.Reason, c.Message, c.LastTransitionTime = corev1.ConditionUnknown, ReasonNodeStatusUnknown, MessageNodeStatusUnknown, ts
			}
		}
		body, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": node.ResourceVersion},
			"status":   map[string]any{"conditions": conds},
		})
		if err != nil {
			return node, 0, fmt.Errorf("encode node %s status: %w", node.Name, err)
		}
		updated := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: node.Name}}
		if err := r.client.Status().Patch(ctx, updated, client.RawPatch(client.MergePatchType, body)); err != nil {
			return node, 0, fmt.Errorf("mark node %s unknown: %w", node.Name, client.IgnoreNotFound(err))
		}
		r.nodeEvents.Event(ctx, updated, record.Normal, ReasonNodeNotReady, fmt.Sprintf("Node %s status is now: NodeNotReady", node.Name))
		node = updated
	}
	if err := r.markPodsNotReady(ctx, node); err != nil {
		return node, 0, err
	}
	return node, 0, nil
}

// markPodsNotReady sets the Ready condition of the node's pods to False, as
// Kubernetes' MarkPodsNotReady does, recording NodeNotReady on each pod.
func (r *reconciler) markPodsNotReady(ctx context.Context, node *corev1.Node) error {
	pods, err := r.podsOnNode(ctx, node.Name)
	if err != nil {
		return err
	}
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		conds := slices.Clone(p.Status.Conditions)
		i := slices.IndexFunc(conds, func(c corev1.PodCondition) bool { return c.Type == corev1.PodReady })
		if i < 0 || conds[i].Status == corev1.ConditionFalse {
			continue
		}
		conds[i].Status, conds[i].LastTransitionTime = corev1.ConditionFalse, api.Now()
		body, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": p.ResourceVersion},
			"status":   map[string]any{"conditions": conds},
		})
		if err != nil {
			return fmt.Errorf("encode pod %s/%s status: %w", p.Namespace, p.Name, err)
		}
		target := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}
		if err := r.client.Status().Patch(ctx, target, client.RawPatch(client.MergePatchType, body)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("mark pod %s/%s not ready: %w", p.Namespace, p.Name, err)
		}
		r.nodeEvents.Event(ctx, p, record.Warning, ReasonNodeNotReady, "Node is not ready")
	}
	return nil
}
