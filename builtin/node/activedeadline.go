package node

import (
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// A pod's spec.activeDeadlineSeconds bounds how long it may be active on the
// node, counted from status.startTime, as in the kubelet: when it passes,
// every container is stopped (preStop, SIGTERM, SIGKILL after the pod's
// termination grace period) and never restarted, and the pod becomes Failed
// with reason DeadlineExceeded. The deadline may be shortened while the pod
// runs (the field may only be lowered or set on update).

// Reason and message of a pod stopped at its active deadline (the kubelet's).
const (
	reasonDeadlineExceeded  = "DeadlineExceeded"
	messageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
)

// activeDeadline returns when the pod's active deadline passes; ok is false
// when it has none or it already passed and was acted upon.
func (w *podWorker) activeDeadline() (due time.Time, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	secs := w.pod.Spec.ActiveDeadlineSeconds
	if secs == nil || w.deadlineExceeded {
		return time.Time{}, false
	}
	return w.startTime.Add(time.Duration(*secs) * time.Second), true
}

// activeDeadlineTimer returns a channel that fires at the pod's active
// deadline (nil: none) and a function stopping it.
func (w *podWorker) activeDeadlineTimer() (<-chan time.Time, func()) {
	due, ok := w.activeDeadline()
	if !ok {
		return nil, func() {}
	}
	t := time.NewTimer(time.Until(due))
	return t.C, func() { t.Stop() }
}

// exceedDeadline stops the pod's containers for good and marks it Failed.
func (w *podWorker) exceedDeadline() {
	w.mu.Lock()
	if w.deadlineExceeded {
		w.mu.Unlock()
		return
	}
	pod := w.pod
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		w.mu.Unlock()
		return // no longer active
	}
	w.deadlineExceeded = true
	w.mu.Unlock()
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = max(*g, 0)
	}
	w.setDeadline(time.Now().Add(time.Duration(grace) * time.Second))
	w.log.Info("Pod exceeded its active deadline", "activeDeadlineSeconds", *pod.Spec.ActiveDeadlineSeconds)
	w.a.rec.Event(w.runCtx, pod, "Normal", reasonDeadlineExceeded, messageDeadlineExceeded)
	w.markDirty()
	go func() {
		w.stopAll()
		w.markDirty()
	}()
}
