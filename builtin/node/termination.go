package node

import (
	"context"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// Termination of a pod being deleted follows the kubelet: every container runs
// its preStop hook, gets SIGTERM and, if still running at the pod's deadline,
// SIGKILL; then the worker writes the final status (a terminal phase) and
// deletes the pod with gracePeriodSeconds=0 and a UID precondition. The
// deadline is the pod's deletionGracePeriodSeconds counted from when the
// worker saw the deletion, and never later than its deletionTimestamp; a
// second DELETE that shortens the grace moves it earlier while the containers
// are stopping.

// goneGrace bounds the termination of a pod that left the API (force deleted):
// nothing waits for it any more, so its containers get at most that long
// (the kubelet's minimum grace when it kills a container).
const goneGrace = 2 * time.Second

// deletionDeadline is when the containers of pod must be gone, for a worker
// that saw the deletion at seen: seen plus the grace period
// (deletionGracePeriodSeconds, else spec.terminationGracePeriodSeconds, else
// 30 s), no later than one second past the deletionTimestamp (it is truncated
// to the second), and no later than now + goneGrace once the pod is gone.
func deletionDeadline(pod *corev1.Pod, gone bool, seen, now time.Time) time.Time {
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		grace = *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	d := seen.Add(time.Duration(max(grace, 0)) * time.Second)
	if ts := pod.DeletionTimestamp; ts != nil {
		if limit := ts.Add(time.Second); limit.Before(d) {
			d = limit
		}
	}
	if gone {
		if limit := now.Add(goneGrace); limit.Before(d) {
			d = limit
		}
	}
	return d
}

// terminalPhase is the phase of a pod whose containers were stopped for good
// (the kubelet's podIsTerminal): Succeeded when every container exited 0,
// Failed otherwise. It returns "" while a container runs or never ran.
func terminalPhase(statuses []corev1.ContainerStatus) corev1.PodPhase {
	ok := true
	for _, s := range statuses {
		t := s.State.Terminated
		if t == nil {
			t = s.LastTerminationState.Terminated
			if s.State.Running != nil || t == nil {
				return ""
			}
			ok = false // waiting to restart after an exit
			continue
		}
		if t.ExitCode != 0 {
			ok = false
		}
	}
	if len(statuses) == 0 {
		return ""
	}
	if ok {
		return corev1.PodSucceeded
	}
	return corev1.PodFailed
}

// setDeadline moves the termination deadline to t when that is earlier (or
// none was set) and wakes the containers' killers.
func (w *podWorker) setDeadline(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.killBy.IsZero() && !t.Before(w.killBy) {
		return
	}
	w.killBy = t
	if w.shortened != nil {
		close(w.shortened)
	}
	w.shortened = make(chan struct{})
}

// deadline returns the termination deadline and a channel closed when it moves.
func (w *podWorker) deadline() (time.Time, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.killBy, w.shortened
}

// deadlineContext returns a context that ends when the termination deadline
// passes, following it when it moves.
func (w *podWorker) deadlineContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		for {
			d, moved := w.deadline()
			t := time.NewTimer(time.Until(d))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
				cancel()
				return
			case <-moved:
				t.Stop()
			}
		}
	}()
	return ctx, cancel
}

// terminate stops every container of a pod being deleted (preStop, SIGTERM,
// SIGKILL at the deadline), following the deadline as the pod changes.
func (w *podWorker) terminate() {
	now := time.Now()
	w.mu.Lock()
	w.terminating = true
	w.deletionSeen = now
	pod, gone := w.pod, w.gone
	w.mu.Unlock()
	w.setDeadline(deletionDeadline(pod, gone, now, now))
	d, _ := w.deadline()
	w.log.V(1).Info("Terminating pod", "grace", time.Until(d).Round(time.Millisecond))
	done := make(chan struct{})
	go func() { defer close(done); w.stopAll() }()
	for {
		select {
		case <-done:
			w.mu.Lock()
			w.killed = true
			w.mu.Unlock()
			w.markDirty()
			return
		case <-w.changed:
			w.mu.Lock()
			pod, gone, seen := w.pod, w.gone, w.deletionSeen
			w.mu.Unlock()
			w.setDeadline(deletionDeadline(pod, gone, seen, time.Now()))
		}
	}
}

// stopAll kills every container by the deadline and waits until they stopped.
func (w *podWorker) stopAll() {
	done := make(chan struct{})
	rs := w.runners()
	for _, r := range rs {
		go func() { defer func() { done <- struct{}{} }(); r.kill("Stopping container " + r.c.Name) }()
	}
	for range rs {
		<-done
	}
}

// kill stops the running container by the worker's deadline: preStop hook,
// then SIGTERM and SIGKILL at the deadline. Later restarts are prevented.
// When the deadline moves earlier the container is stopped again with the
// shorter grace.
func (r *containerRunner) kill(why string) {
	r.mu.Lock()
	already := r.stopping
	r.stopping = true
	id, running := r.id, r.running
	r.mu.Unlock()
	if !running || already {
		return
	}
	ctx := context.WithoutCancel(r.w.a.ctx)
	pod := r.w.current()
	if r.c.Lifecycle != nil && r.c.Lifecycle.PreStop != nil {
		hctx, cancel := r.w.deadlineContext(ctx)
		if err := r.runPreStop(hctx, id); err != nil {
			r.w.log.Info("PreStop hook failed", "container", r.c.Name, "error", err.Error())
			r.w.a.rec.Event(ctx, pod, "Warning", "FailedPreStopHook", err.Error())
		}
		cancel()
	}
	go r.w.a.rec.Event(ctx, pod, "Normal", "Killing", why)
	r.stopBy(ctx, id)
}

// stopBy stops container id by the worker's deadline, again each time the
// deadline moves earlier; it returns once the container stopped.
func (r *containerRunner) stopBy(ctx context.Context, id string) {
	for {
		d, moved := r.w.deadline()
		stopped := make(chan error, 1)
		go func() { stopped <- r.w.a.stopContainer(ctx, id, max(time.Until(d), 0)) }()
		select {
		case err := <-stopped:
			if err != nil {
				r.w.log.Error(err, "Stop container failed", "container", r.c.Name)
			}
			return
		case <-moved:
			// Stop again with the shorter grace; the earlier Stop returns
			// once the container exited.
		}
	}
}

// completeDeletion deletes the terminated pod with a grace of 0 and its UID
// as precondition, retrying transient failures while the agent runs.
func (w *podWorker) completeDeletion(ctx context.Context, pod *corev1.Pod) {
	p := &corev1.Pod{}
	p.Namespace, p.Name = pod.Namespace, pod.Name
	uid := w.uid
	backoff := 200 * time.Millisecond
	for {
		err := w.a.c.Delete(ctx, p, client.GracePeriodSeconds(0), client.Preconditions{UID: &uid})
		if client.IgnoreNotFound(err) == nil {
			return
		}
		if ctx.Err() != nil {
			return
		}
		if apierrors.IsConflict(err) {
			return // another pod of that name: ours is gone
		}
		w.log.Error(err, "Delete terminated pod failed; retrying")
		if !sleepCtx(ctx, backoff) {
			return
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}
