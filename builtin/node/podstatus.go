package node

import (
	"fmt"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// podPhase follows the kubelet's rules over the container statuses.
func podPhase(policy corev1.RestartPolicy, initDone, initFailed bool, statuses []corev1.ContainerStatus) corev1.PodPhase {
	if initFailed {
		return corev1.PodFailed
	}
	if !initDone {
		return corev1.PodPending
	}
	var running, waiting, stopped, succeeded int
	for _, s := range statuses {
		switch {
		case s.State.Running != nil:
			running++
		case s.State.Terminated != nil:
			stopped++
			if s.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case s.State.Waiting != nil:
			if s.LastTerminationState.Terminated != nil {
				stopped++
			} else {
				waiting++
			}
		default:
			waiting++
		}
	}
	switch {
	case waiting > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case stopped > 0:
		if policy == corev1.RestartPolicyAlways {
			return corev1.PodRunning
		}
		if stopped == succeeded {
			return corev1.PodSucceeded
		}
		if policy == corev1.RestartPolicyNever {
			return corev1.PodFailed
		}
		return corev1.PodRunning
	}
	return corev1.PodPending
}

func qosClass(pod *corev1.Pod) corev1.PodQOSClass { return corev1.PodQOS(&pod.Spec) }

// setCondition records a condition, keeping its transition time when the
// status did not change. Called with w.mu held.
func (w *podWorker) setCondition(t corev1.PodConditionType, ok bool, reason, msg string) corev1.PodCondition {
	st := corev1.ConditionFalse
	if ok {
		st, reason, msg = corev1.ConditionTrue, "", ""
	}
	c := corev1.PodCondition{Type: t, Status: st, Reason: reason, Message: msg, LastTransitionTime: api.Now()}
	if old, found := w.conds[t]; found && old.Status == st {
		c.LastTransitionTime = old.LastTransitionTime
	}
	w.conds[t] = c
	return c
}

// computeStatus assembles the pod status from the worker's state.
func (w *podWorker) computeStatus() corev1.PodStatus {
	var inits, ctrs []corev1.ContainerStatus
	for _, r := range w.inits {
		inits = append(inits, r.snapshot())
	}
	for _, r := range w.ctrs {
		ctrs = append(ctrs, r.snapshot())
	}
	ephs := w.ephemeralStatuses()
	w.mu.Lock()
	defer w.mu.Unlock()
	pod := w.pod
	policy := pod.Spec.RestartPolicy
	if policy == "" {
		policy = corev1.RestartPolicyAlways
	}
	if !w.initDone {
		// Containers wait for init: PodInitializing, or ContainerCreating before the sandbox.
		for i := range ctrs {
			if ctrs[i].State.Waiting != nil && ctrs[i].State.Waiting.Reason == "PodInitializing" && len(w.inits) == 0 {
				ctrs[i].State.Waiting.Reason = "ContainerCreating"
			}
		}
	}
	capTerminationMessages(len(pod.Spec.InitContainers)+len(pod.Spec.Containers)+len(pod.Spec.EphemeralContainers), inits, ctrs, ephs)
	phase := podPhase(policy, w.initDone, w.initFailed, ctrs)
	if w.killed && phase != corev1.PodSucceeded && phase != corev1.PodFailed {
		// Stopped for deletion: the pod is finished whatever its restart policy.
		if p := terminalPhase(ctrs); p != "" {
			phase = p
		}
	}
	message, reason := w.message, ""
	if w.deadlineExceeded && phase != corev1.PodSucceeded {
		phase, reason, message = corev1.PodFailed, reasonDeadlineExceeded, messageDeadlineExceeded
	}
	if w.rejectReason != "" {
		phase, reason, message = corev1.PodFailed, w.rejectReason, w.rejectMessage
	}
	st := corev1.PodStatus{
		Phase: phase, HostIP: w.a.opts.InternalIP, HostIPs: []corev1.HostIP{{IP: w.a.opts.InternalIP}},
		StartTime: &w.startTime, InitContainerStatuses: inits, ContainerStatuses: ctrs, EphemeralContainerStatuses: ephs, QOSClass: qosClass(pod),
		Message: message, Reason: reason,
	}
	if w.podIP != "" {
		st.PodIP, st.PodIPs = w.podIP, []corev1.PodIP{{IP: w.podIP}}
	}
	var notInit, notReady []string
	for _, s := range inits {
		if s.State.Terminated == nil || s.State.Terminated.ExitCode != 0 {
			notInit = append(notInit, s.Name)
		}
	}
	for _, s := range ctrs {
		if !s.Ready {
			notReady = append(notReady, s.Name)
		}
	}
	terminal := phase == corev1.PodSucceeded || phase == corev1.PodFailed
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			scheduled = c
		}
	}
	readyReason, readyMsg := "ContainersNotReady", fmt.Sprintf("containers with unready status: [%s]", strings.Join(notReady, " "))
	if terminal {
		readyReason, readyMsg = "PodCompleted", ""
	}
	conds := []corev1.PodCondition{
		w.setCondition(corev1.PodReadyToStartContainers, w.sandboxOK && !terminal, "", ""),
		w.setCondition(corev1.PodInitialized, len(notInit) == 0 || w.initDone, "ContainersNotInitialized", fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(notInit, " "))),
		w.setCondition(corev1.ContainersReady, len(notReady) == 0 && !terminal, readyReason, readyMsg),
		w.setCondition(corev1.PodReady, len(notReady) == 0 && !terminal && w.gatesReady(pod), readyReason, readyMsg),
		scheduled,
	}
	if phase == corev1.PodSucceeded {
		// The kubelet's PodCompleted; a pod that failed in its init
		// containers keeps ContainersNotInitialized and their names.
		conds[1] = w.setCondition(corev1.PodInitialized, true, "", "")
		conds[1].Reason = "PodCompleted"
		w.conds[corev1.PodInitialized] = conds[1]
	}
	// Conditions others set (readiness gates' conditions, DisruptionTarget)
	// are kept, as the kubelet keeps the ones it does not own: the status is
	// written as a merge patch, which replaces the whole list.
	for _, c := range pod.Status.Conditions {
		switch c.Type {
		case corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady, corev1.PodScheduled:
		default:
			conds = append(conds, c)
		}
	}
	st.Conditions = conds
	return st
}

// gatesReady reports whether every readiness gate's condition is True.
func (w *podWorker) gatesReady(pod *corev1.Pod) bool {
	for _, g := range pod.Spec.ReadinessGates {
		ok := false
		for _, c := range pod.Status.Conditions {
			if c.Type == g.ConditionType && c.Status == corev1.ConditionTrue {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
