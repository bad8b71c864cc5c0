package defaultpreemption

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// apiWriter is every write preemption makes.
type apiWriter interface {
	// markDisruption adds the DisruptionTarget condition to the victim's status.
	markDisruption(ctx context.Context, victim *corev1.Pod, cond corev1.PodCondition) error
	// deletePod deletes the victim gracefully (its own grace period), only if
	// it is still the same pod (UID precondition); NotFound is success.
	deletePod(ctx context.Context, victim *corev1.Pod) error
	// clearNomination removes status.nominatedNodeName.
	clearNomination(ctx context.Context, pod *corev1.Pod) error
}

// prepareCandidate preempts the candidate's victims and drops the nominations
// of lower-priority pods nominated to its node.
func (pl *DefaultPreemption) prepareCandidate(ctx context.Context, c candidate, pod *corev1.Pod) *plugin.Status {
	schedulerName := pod.Spec.SchedulerName
	if schedulerName == "" {
		schedulerName = "default-scheduler"
	}
	for _, victim := range c.victims {
		if wp := pl.h.GetWaitingPod(victim.UID); wp != nil {
			wp.Reject(Name, "preempted")
		} else {
			cond := corev1.PodCondition{
				Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: ReasonPreemptionByScheduler,
				Message:            fmt.Sprintf("%s: preempting to accommodate a higher priority pod", schedulerName),
				LastTransitionTime: api.NewTime(time.Now().UTC().Truncate(time.Second)),
			}
			if !hasCondition(victim, cond) {
				if err := pl.api.markDisruption(ctx, victim, cond); err != nil && !apierrors.IsNotFound(err) {
					return plugin.AsStatus(fmt.Errorf("mark victim %s/%s: %w", victim.Namespace, victim.Name, err))
				}
			}
			if err := pl.api.deletePod(ctx, victim); err != nil {
				return plugin.AsStatus(fmt.Errorf("preempt victim %s/%s: %w", victim.Namespace, victim.Name, err))
			}
		}
		if rec := pl.h.EventRecorder(); rec != nil {
			rec.Eventf(ctx, victim, "Normal", "Preempted", "Preempted by pod %v on node %v", pod.UID, c.node)
		}
	}
	// Lower-priority pods nominated to this node may no longer fit: their
	// nomination goes, which sends them back to the active queue. Failures are
	// not fatal.
	prio := podPriority(pod)
	for _, pi := range pl.h.NominatedPodsForNode(c.node) {
		if podPriority(pi.Pod) < prio && pi.Pod.Status.NominatedNodeName != "" {
			_ = pl.api.clearNomination(ctx, pi.Pod)
		}
	}
	return nil
}

// hasCondition reports whether the pod already has cond's type with the same
// status, reason and message.
func hasCondition(p *corev1.Pod, cond corev1.PodCondition) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == cond.Type {
			return c.Status == cond.Status && c.Reason == cond.Reason && c.Message == cond.Message
		}
	}
	return false
}

// clientWriter writes through the handle's client.
type clientWriter struct{ h plugin.Handle }

func (w clientWriter) client() (*client.Client, error) {
	c := w.h.Client()
	if c == nil {
		return nil, fmt.Errorf("%s: no API client", Name)
	}
	return c, nil
}

func (w clientWriter) markDisruption(ctx context.Context, victim *corev1.Pod, cond corev1.PodCondition) error {
	c, err := w.client()
	if err != nil {
		return err
	}
	// A strategic merge patch keyed by condition type leaves the others alone.
	body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{cond}}})
	if err != nil {
		return err
	}
	return c.Status().Patch(ctx, ref(victim), client.RawPatch(client.StrategicMergePatchType, body))
}

func (w clientWriter) deletePod(ctx context.Context, victim *corev1.Pod) error {
	c, err := w.client()
	if err != nil {
		return err
	}
	uid := victim.UID
	err = c.Delete(ctx, ref(victim), client.Preconditions{UID: &uid})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (w clientWriter) clearNomination(ctx context.Context, pod *corev1.Pod) error {
	c, err := w.client()
	if err != nil {
		return err
	}
	body := []byte(`{"status":{"nominatedNodeName":null}}`)
	err = c.Status().Patch(ctx, ref(pod), client.RawPatch(client.MergePatchType, body))
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// ref is a fresh Pod naming p, for the client to fill from the answer: the
// snapshot's pods are shared and must not be modified.
func ref(p *corev1.Pod) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}
}
