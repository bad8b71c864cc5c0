package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// Lifecycle hooks, as the kubelet runs them:
//   - postStart runs right after the container started, before its probes; the
//     run loop waits for it and the container shows Waiting/ContainerCreating
//     until it succeeded. When it fails the agent records a
//     FailedPostStartHook event, shows Waiting/PostStartHookError and kills the
//     container, which then restarts by the restart policy (with
//     CrashLoopBackOff). Adopted containers do not run it again.
//   - preStop runs when the container is stopped for the pod's termination,
//     within the termination deadline, before SIGTERM (termination.go calls
//     runPreStop); a failure is a FailedPreStopHook event and does not prevent
//     the stop.
//
// Handlers: exec (in the container's context through the runtime), httpGet
// (to the pod IP unless host is set; a status outside 200-399 fails) and
// sleep. tcpSocket is accepted by the API only for compatibility and fails,
// as in Kubernetes.

// errTCPHook is the failure of a tcpSocket lifecycle handler.
var errTCPHook = errors.New("tcpSocket is not supported as a lifecycle handler")

// runHandler runs a lifecycle handler (preStop/postStart) until it finishes or
// ctx ends.
func (w *podWorker) runHandler(ctx context.Context, c corev1.Container, id string, h *corev1.LifecycleHandler) error {
	switch {
	case h.Sleep != nil:
		if !sleepCtx(ctx, time.Duration(h.Sleep.Seconds)*time.Second) {
			return fmt.Errorf("sleep %ds interrupted: %w", h.Sleep.Seconds, ctx.Err())
		}
		return nil
	case h.Exec != nil:
		return w.check(ctx, c, id, h.Exec, nil, nil)
	case h.HTTPGet != nil:
		return w.check(ctx, c, id, nil, h.HTTPGet, nil)
	case h.TCPSocket != nil:
		return errTCPHook
	}
	return errors.New("the lifecycle handler has no action")
}

// hookError renders a failed hook like the kubelet's messages.
func hookError(kind string, c corev1.Container, pod *corev1.Pod, h *corev1.LifecycleHandler, err error) string {
	switch {
	case h.Exec != nil:
		return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v", h.Exec.Command, c.Name, pod.Name+"_"+pod.Namespace+"("+pod.UID+")", err)
	case h.HTTPGet != nil:
		return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v", h.HTTPGet.Path, c.Name, pod.Name+"_"+pod.Namespace+"("+pod.UID+")", err)
	}
	return fmt.Sprintf("%s hook for Container %q in Pod %q failed - error: %v", kind, c.Name, pod.Name+"_"+pod.Namespace+"("+pod.UID+")", err)
}

// postStart runs the container's postStart hook, if any, for container id and
// reports whether it succeeded (true without a hook). On failure it records
// FailedPostStartHook, shows the container waiting with PostStartHookError and
// kills it (the pod's termination grace period applies), so the run loop sees
// it exit and restarts it by policy.
func (r *containerRunner) postStart(ctx context.Context, id string) bool {
	if r.c.Lifecycle == nil || r.c.Lifecycle.PostStart == nil {
		return true
	}
	h := r.c.Lifecycle.PostStart
	err := r.w.runHandler(ctx, r.c, id, h)
	if err == nil {
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	pod := r.w.current()
	msg := hookError("PostStart", r.c, pod, h, err)
	r.setIfCurrent(id, func(s *corev1.ContainerStatus) {
		s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PostStartHookError", Message: msg}}
	})
	r.w.log.Info("PostStart hook failed; killing the container", "container", r.c.Name, "error", err.Error())
	r.w.a.rec.Event(ctx, pod, "Warning", "FailedPostStartHook", msg)
	grace := time.Duration(corev1.DefaultTerminationGracePeriodSeconds) * time.Second
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	go r.w.a.rec.Event(ctx, pod, "Normal", "Killing", "FailedPostStartHook")
	if err := r.w.a.stopContainer(context.WithoutCancel(ctx), id, grace); err != nil {
		r.w.log.Error(err, "Stop container after its failed postStart hook failed", "container", r.c.Name)
	}
	return false
}

// runPreStop runs the container's preStop hook, if any, for container id and
// returns its error (nil without a hook). ctx bounds it: the termination path
// passes a context that ends at the pod's termination deadline. The caller
// records FailedPreStopHook and goes on stopping the container.
func (r *containerRunner) runPreStop(ctx context.Context, id string) error {
	if r.c.Lifecycle == nil || r.c.Lifecycle.PreStop == nil {
		return nil
	}
	h := r.c.Lifecycle.PreStop
	if err := r.w.runHandler(ctx, r.c, id, h); err != nil {
		return errors.New(hookError("PreStop", r.c, r.w.current(), h, err))
	}
	return nil
}
