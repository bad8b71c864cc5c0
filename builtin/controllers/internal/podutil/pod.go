package podutil

import (
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// DeletionCostAnnotation is the pod annotation (an int32 as a string) that
// makes a pod cheaper (lower) or dearer (higher) to delete on scale down.
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// IsActive reports whether the pod counts towards its owner's replicas: it is
// not terminating and has not finished (Succeeded or Failed).
func IsActive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// ReadyCondition returns the pod's Ready condition, or nil.
func ReadyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// IsReady reports whether the pod's Ready condition is True.
func IsReady(p *corev1.Pod) bool {
	c := ReadyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

// AvailableIn reports whether the pod is available at now, that is ready for at
// least minReadySeconds, and, when it is ready but not yet available, how long
// until it becomes available.
func AvailableIn(p *corev1.Pod, minReadySeconds int32, now time.Time) (available bool, wait time.Duration) {
	c := ReadyCondition(p)
	if c == nil || c.Status != corev1.ConditionTrue {
		return false, 0
	}
	if minReadySeconds <= 0 {
		return true, 0
	}
	if c.LastTransitionTime.IsZero() {
		return false, time.Duration(minReadySeconds) * time.Second
	}
	at := c.LastTransitionTime.Add(time.Duration(minReadySeconds) * time.Second)
	if !at.After(now) {
		return true, 0
	}
	return false, at.Sub(now)
}

// IsAvailable reports whether the pod has been ready for minReadySeconds at now.
func IsAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	ok, _ := AvailableIn(p, minReadySeconds, now)
	return ok
}
