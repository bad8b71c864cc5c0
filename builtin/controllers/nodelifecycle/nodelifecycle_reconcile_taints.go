package nodelifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/record"
)

// isLifecycleTaint reports whether t is one this controller manages.
func isLifecycleTaint(t corev1.Taint) bool {
	return (t.Key == corev1.TaintNodeUnreachable || t.Key == corev1.TaintNodeNotReady) &&
		(t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute)
}

// wantedTaintKey returns the lifecycle taint the node's Ready status calls
// for ("" for none).
func wantedTaintKey(n *corev1.Node) string {
	switch readyStatus(n) {
	case corev1.ConditionUnknown:
		return corev1.TaintNodeUnreachable
	case corev1.ConditionFalse:
		return corev1.TaintNodeNotReady
	}
	return ""
}

func hasTaint(taints []corev1.Taint, key string, effect corev1.TaintEffect) *corev1.Taint {
	for i := range taints {
		if taints[i].Key == key && taints[i].Effect == effect {
			return &taints[i]
		}
	}
	return nil
}

// reconcileTaints makes the lifecycle taints follow the Ready condition. A new
// NoExecute taint (none present before) waits for the zone's rate limiter.
func (r *reconciler) reconcileTaints(ctx context.Context, node *corev1.Node, now time.Time) (_ *corev1.Node, _ time.Duration, err error) {
	key := wantedTaintKey(node)
	var keep []corev1.Taint
	hadNoExecute, tookToken := false, false
	for _, t := range node.Spec.Taints {
		if !isLifecycleTaint(t) {
			keep = append(keep, t)
			continue
		}
		if t.Effect == corev1.TaintEffectNoExecute {
			hadNoExecute = true
		}
	}
	want := slices.Clone(keep)
	var requeue time.Duration
	if key != "" {
		want = append(want, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
		if old := hasTaint(node.Spec.Taints, key, corev1.TaintEffectNoSchedule); old != nil {
			want[len(want)-1] = *old
		}
		switch old := hasTaint(node.Spec.Taints, key, corev1.TaintEffectNoExecute); {
		case old != nil:
			want = append(want, *old)
		case hadNoExecute:
			// Swapping not-ready and unreachable is not rate-limited.
			want = append(want, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute, TimeAdded: api.NewTimePtr(now)})
		default:
			rate, rerr := r.zoneRate(ctx, node)
			if rerr != nil {
				return node, 0, rerr
			}
			if ok, wait := r.limiter.take(zoneOf(node), rate, now); ok {
				tookToken = true
				want = append(want, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute, TimeAdded: api.NewTimePtr(now)})
			} else {
				requeue = wait
			}
		}
	}
	if sameTaints(node.Spec.Taints, want) {
		return node, requeue, nil
	}
	if tookToken {
		defer func() {
			if err != nil {
				r.limiter.refund(zoneOf(node))
			}
		}()
	}
	if want == nil {
		want = []corev1.Taint{}
	}
	var body []byte
	body, err = json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": node.ResourceVersion},
		"spec":     map[string]any{"taints": want},
	})
	if err != nil {
		return node, 0, fmt.Errorf("encode node %s taints: %w", node.Name, err)
	}
	updated := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: node.Name}}
	if err = r.client.Patch(ctx, updated, client.RawPatch(client.MergePatchType, body)); err != nil {
		return node, 0, fmt.Errorf("update taints of node %s: %w", node.Name, err)
	}
	if key == "" {
		r.nodeEvents.Event(ctx, updated, record.Normal, ReasonNodeReady, fmt.Sprintf("Node %s status is now: NodeReady", node.Name))
	}
	return updated, requeue, nil
}

func sameTaints(a, b []corev1.Taint) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.Taint) bool {
		return x.Key == y.Key && x.Value == y.Value && x.Effect == y.Effect && x.TimeAdded.IsZero() == y.TimeAdded.IsZero() &&
			(x.TimeAdded.IsZero() || x.TimeAdded.Time.Equal(y.TimeAdded.Time))
	})
}

// zoneRate is the NoExecute tainting rate of the node's zone: the secondary
// rate when the zone is disrupted (more than 2 and at least the threshold of
// its nodes not Ready), the primary rate otherwise.
func (r *reconciler) zoneRate(ctx context.Context, node *corev1.Node) (float64, error) {
	zone := zoneOf(node)
	total, unhealthy := 0, 0
	nodes := &corev1.NodeList{}
	if err := r.reader.List(ctx, nodes); err != nil {
		return 0, fmt.Errorf("list nodes of zone %q: %w", zone, err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if zoneOf(n) != zone {
			continue
		}
		if n.Name == node.Name {
			n = node // the freshest state
		}
		total++
		if readyStatus(n) != corev1.ConditionTrue {
			unhealthy++
		}
	}
	if unhealthy > 2 && float64(unhealthy) >= r.opts.UnhealthyZoneThreshold*float64(total) {
		return r.opts.SecondaryEvictionRate, nil
	}
	return r.opts.EvictionRate, nil
}
