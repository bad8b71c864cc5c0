package nodelifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/record"
)

// tolerates reports whether tol tolerates taint (Kubernetes' ToleratesTaint
// for the Exists and Equal operators).
func tolerates(tol corev1.Toleration, taint corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != taint.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != taint.Key {
		return false
	}
	switch tol.Operator {
	case corev1.TolerationOpExists:
		return true
	case "", corev1.TolerationOpEqual:
		return tol.Key != "" && tol.Value == taint.Value
	}
	return false
}

// evictionDelay returns how long after the NoExecute taints were added the
// pod must go: 0 when a taint is not tolerated, the shortest tolerationSeconds
// of the tolerations used otherwise, and forever=true when none is bounded.
func evictionDelay(pod *corev1.Pod, taints []corev1.Taint) (delay time.Duration, forever bool) {
	minSecs := int64(-1)
	for _, t := range taints {
		used := false
		for _, tol := range pod.Spec.Tolerations {
			if !tolerates(tol, t) {
				continue
			}
			used = true
			if tol.TolerationSeconds != nil {
				s := max(*tol.TolerationSeconds, 0)
				if minSecs < 0 || s < minSecs {
					minSecs = s
				}
			}
		}
		if !used {
			return 0, false
		}
	}
	if minSecs < 0 {
		return 0, true
	}
	return time.Duration(minSecs) * time.Second, false
}

// scheduledEvictions remembers pods whose eviction is pending, to record the
// cancellation when their node's taint goes away first.
type scheduledEvictions struct {
	mu   sync.Mutex
	pods map[string]map[string]bool // node → pod key; guarded by mu
}

func newScheduledEvictions() *scheduledEvictions {
	return &scheduledEvictions{pods: map[string]map[string]bool{}}
}

func (s *scheduledEvictions) add(node, pod string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pods[node] == nil {
		s.pods[node] = map[string]bool{}
	}
	s.pods[node][pod] = true
}

// remove forgets pod and reports whether it was scheduled.
func (s *scheduledEvictions) remove(node, pod string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := s.pods[node][pod]
	delete(s.pods[node], pod)
	return ok
}

func (s *scheduledEvictions) forgetNode(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pods, node)
}

// reconcileEviction evicts the node's pods whose tolerations of its NoExecute
// taints ran out, and requeues for the next deadline.
func (r *reconciler) reconcileEviction(ctx context.Context, node *corev1.Node, now time.Time) (*corev1.Node, time.Duration, error) {
	var taints []corev1.Taint
	var since time.Time
	for _, t := range node.Spec.Taints {
		if t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		taints = append(taints, t)
		if added := t.TimeAdded; !added.IsZero() && (since.IsZero() || added.Time.Before(since)) {
			since = added.Time
		}
	}
	if since.IsZero() {
		since = now
	}
	var requeue time.Duration
	pods, err := r.podsOnNode(ctx, node.Name)
	if err != nil {
		return node, 0, err
	}
	for _, p := range pods {
		key := p.Namespace + "/" + p.Name
		if p.DeletionTimestamp != nil {
			r.scheduled.remove(node.Name, key)
			continue
		}
		delay, forever := evictionDelay(p, taints)
		if len(taints) == 0 || forever {
			if r.scheduled.remove(node.Name, key) {
				r.podEvents.Event(ctx, p, record.Normal, ReasonTaintManagerEviction, "Cancelling deletion of Pod "+key)
			}
			continue
		}
		if left := since.Add(delay).Sub(now); left > 0 {
			r.scheduled.add(node.Name, key)
			if requeue == 0 || left < requeue {
				requeue = left
			}
			continue
		}
		if err := r.evict(ctx, p); err != nil {
			return node, 0, err
		}
		r.scheduled.remove(node.Name, key)
	}
	return node, requeue, nil
}

// evict records the eviction, marks the pod as a disruption target and
// evicts it.
func (r *reconciler) evict(ctx context.Context, p *corev1.Pod) error {
	key := p.Namespace + "/" + p.Name
	r.podEvents.Event(ctx, p, record.Normal, ReasonTaintManagerEviction, "Marking for deletion Pod "+key)
	conds := slices.Clone(p.Status.Conditions)
	if !slices.ContainsFunc(conds, func(c corev1.PodCondition) bool { return c.Type == corev1.DisruptionTarget }) {
		conds = append(conds, corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, LastTransitionTime: api.Now(),
			Reason: "DeletionByTaintManager", Message: "Taint manager: deleting due to NoExecute taint",
		})
		body, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": p.ResourceVersion},
			"status":   map[string]any{"conditions": conds},
		})
		if err != nil {
			return fmt.Errorf("encode pod %s status: %w", key, err)
		}
		target := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}
		// Best effort: a conflict (the pod changed since it was cached) must
		// not hold up the eviction.
		if err := r.client.Status().Patch(ctx, target, client.RawPatch(client.MergePatchType, body)); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("mark pod %s as disruption target: %w", key, err)
		}
	}
	if err := evict(ctx, r.client, p); err != nil {
		return err
	}
	return nil
}
