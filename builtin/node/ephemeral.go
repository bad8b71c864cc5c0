package node

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/framework/api"
)

// Ephemeral containers (kubectl debug). They are added to a pod's spec
// through pods/NAME/ephemeralcontainers while it runs; the worker starts
// each new one once the pod's init containers completed, runs it once
// (never restarted, no probes, never Ready) and reports it in
// status.ephemeralContainerStatuses. With targetContainerName the runtime
// puts it in that container's PID namespace (ContainerSpec.TargetID).
// Runtimes that run no real processes (no cri.StreamExecer) cannot run
// them: the container stays Waiting with reason CreateContainerError and a
// message saying why, and a Warning event says it too.

// ephemerals returns the pod's ephemeral container runners.
func (w *podWorker) ephemerals() []*containerRunner {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*containerRunner{}, w.ephs...)
}

// runners returns every container runner of the pod: init containers,
// containers, then ephemeral containers.
func (w *podWorker) runners() []*containerRunner {
	out := append(append([]*containerRunner{}, w.inits...), w.ctrs...)
	return append(out, w.ephemerals()...)
}

// startEphemerals starts the ephemeral containers of the pod's spec that have
// no runner yet, when the pod runs (its init containers are done) and is
// not terminating; it is called on each pod update and once init completes.
func (w *podWorker) startEphemerals(ctx context.Context) {
	w.mu.Lock()
	pod := w.pod
	if !w.initDone || w.terminating || w.gone || pod.DeletionTimestamp != nil || ctx.Err() != nil {
		w.mu.Unlock()
		return
	}
	have := map[string]bool{}
	for _, r := range w.ephs {
		have[r.c.Name] = true
	}
	var added []*containerRunner
	for i := range pod.Spec.EphemeralContainers {
		ec := &pod.Spec.EphemeralContainers[i]
		if have[ec.Name] {
			continue
		}
		r := newContainerRunner(w, corev1.Container(ec.EphemeralContainerCommon), false)
		r.ephemeral, r.target = true, ec.TargetContainerName
		if prior := priorStatus(pod, ec.Name); prior != nil {
			// Run by an earlier agent: ephemeral containers never run twice.
			r.status, r.finished = *prior, true
			if prior.State.Terminated == nil {
				r.status.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 137, Reason: cri.ReasonStatusUnknown,
					Message: "The node agent restarted while the ephemeral container ran; it is not run again"}}
			}
		}
		w.ephs = append(w.ephs, r)
		added = append(added, r)
	}
	w.mu.Unlock()
	for _, r := range added {
		if r.isFinished() {
			continue
		}
		if _, ok := w.a.rt.(cri.StreamExecer); !ok {
			msg := fmt.Sprintf("ephemeral containers cannot run on node %s: its %s runtime runs no real processes", w.a.opts.NodeName, w.a.rt.Name())
			r.setStatus(func(s *corev1.ContainerStatus) {
				s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerError", Message: msg}}
			})
			go w.a.rec.Event(ctx, pod, "Warning", "Failed", "Error: "+msg)
			continue
		}
		r.setStatus(func(s *corev1.ContainerStatus) {
			s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		})
		go r.run(ctx)
	}
	if len(added) > 0 {
		w.markDirty()
	}
}

// priorStatus is the pod's reported status of ephemeral container name that
// ran or runs (nil when it never started).
func priorStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.EphemeralContainerStatuses {
		s := &pod.Status.EphemeralContainerStatuses[i]
		if s.Name == name && (s.State.Running != nil || s.State.Terminated != nil) {
			return s
		}
	}
	return nil
}

func (r *containerRunner) isFinished() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finished
}

// targetID is the runtime ID of the running container an ephemeral
// container targets ("" when none or it does not run).
func (w *podWorker) targetID(name string) string {
	if name == "" {
		return ""
	}
	for _, r := range append(append([]*containerRunner{}, w.inits...), w.ctrs...) {
		if r.c.Name != name {
			continue
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.running {
			return r.id
		}
	}
	return ""
}

// ephemeralStatuses snapshots the ephemeral containers' statuses (nil when
// there are none).
func (w *podWorker) ephemeralStatuses() []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, r := range w.ephemerals() {
		s := r.snapshot()
		s.Ready = false
		s.Started = api.Ptr(s.State.Running != nil)
		out = append(out, s)
	}
	return out
}
