package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/logs"
	"github.com/converge-dev/converge/framework/api"
)

// containerRunner runs one container of a pod through its restarts.
type containerRunner struct {
	w         *podWorker
	c         corev1.Container
	init      bool
	ephemeral bool   // an ephemeral container (ephemeral.go): runs once, no probes
	target    string // ephemeral: the targetContainerName

	mu       sync.Mutex
	status   corev1.ContainerStatus // guarded by mu
	id       string                 // current runtime container ID; guarded by mu
	ids      []string               // every container created; guarded by mu
	attempt  int                    // attempt of the current/last container; guarded by mu
	running  bool                   // guarded by mu
	finished bool                   // will not run again; guarded by mu
	stopping bool                   // the pod is terminating; guarded by mu
	exited   chan struct{}          // closed when the current container exited; guarded by mu
	image    string                 // the image the next start uses: the pod spec's latest (c.Image is the first); guarded by mu
	changed  bool                   // the running container was killed because its image changed; guarded by mu

	pullBackoff time.Duration // between failed image pulls; used only by the run goroutine (pull.go)
	pulledEvent string        // a Pulled event ensureImage left for after the start attempt; used only by the run goroutine (pull.go)

	adopted      *cri.ContainerInfo // started by an earlier agent, to watch first (adopt.go); guarded by mu
	wasAdopted   bool               // set before the worker runs, then read-only
	adoptedReady bool               // the adopted container was Ready; set before the worker runs
}

func newContainerRunner(w *podWorker, c corev1.Container, init bool) *containerRunner {
	return &containerRunner{w: w, c: c, init: init, image: c.Image, status: corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}},
		Started: api.Ptr(false),
	}}
}

func (r *containerRunner) logDir() string {
	pod := r.w.current()
	return filepath.Join(r.w.a.opts.RootDir, "logs", pod.Namespace+"_"+pod.Name+"_"+pod.UID, r.c.Name)
}

func (r *containerRunner) logPath(attempt int) string {
	return filepath.Join(r.logDir(), strconv.Itoa(attempt)+".log")
}

func (r *containerRunner) setStatus(f func(s *corev1.ContainerStatus)) {
	r.mu.Lock()
	f(&r.status)
	r.mu.Unlock()
	r.w.markDirty()
}

func (r *containerRunner) snapshot() corev1.ContainerStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.status
	if s.Started != nil {
		s.Started = api.Ptr(*s.Started)
	}
	return s
}

func (r *containerRunner) restartPolicy() corev1.RestartPolicy {
	if r.ephemeral {
		return corev1.RestartPolicyNever
	}
	if r.c.RestartPolicy != nil {
		return corev1.RestartPolicy(*r.c.RestartPolicy)
	}
	if p := r.w.current().Spec.RestartPolicy; p != "" {
		return p
	}
	return corev1.RestartPolicyAlways
}

// shouldRestart applies the restart policy to an exit code.
func (r *containerRunner) shouldRestart(code int) bool {
	p := r.restartPolicy()
	if r.init && r.c.RestartPolicy == nil {
		// Init containers never restart after success; Always behaves as OnFailure.
		return code != 0 && p != corev1.RestartPolicyNever
	}
	switch p {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return code != 0
	}
	return true
}

func (r *containerRunner) isStopping() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopping
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// run starts the container and restarts it by policy until it finishes for
// good or ctx ends; it reports whether the last run exited 0.
func (r *containerRunner) run(ctx context.Context) bool {
	a := r.w.a
	var backoff time.Duration
	restarts := 0
	configBackoff := 500 * time.Millisecond
	adopted := r.takeAdopted()
	switch {
	case adopted != nil:
		restarts = adopted.Spec.Attempt
	case r.init && r.w.adoptedMain():
		r.completeInit() // it completed before the agent restarted
		return true
	}
	for {
		// An adopted container is watched even when the pod is already
		// stopping, so its exit is reported.
		if ctx.Err() != nil || (r.isStopping() && adopted == nil) {
			return false
		}
		attempt := restarts
		var id string
		var spec cri.ContainerSpec
		startedAt := time.Now()
		wasAdopted := adopted != nil
		if wasAdopted {
			// A container an earlier agent started: watch it instead of starting another.
			id, spec, startedAt = adopted.Status.ID, adopted.Spec, adopted.Status.StartedAt
			adopted = nil
		} else {
			var next startOutcome
			id, spec, next = r.startAttempt(ctx, attempt, &backoff, &configBackoff)
			switch next {
			case startRetry:
				continue
			case startGiveUp:
				return false
			}
			configBackoff = 500 * time.Millisecond
			startedAt = time.Now()
		}
		exited := make(chan struct{})
		r.mu.Lock()
		r.id, r.attempt, r.running, r.exited = id, attempt, true, exited
		r.ids = append(r.ids, id)
		r.status.ContainerID = a.rt.Name() + "://" + id
		if spec.Image != "" {
			r.status.Image = spec.Image
		}
		r.status.RestartCount = int32(restarts)
		runningState := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: api.NewTime(startedAt.UTC().Truncate(time.Second))}}
		// Like the kubelet, a container whose postStart hook runs still shows
		// as being created; it is Running once the hook succeeded.
		hooked := !wasAdopted && r.c.Lifecycle != nil && r.c.Lifecycle.PostStart != nil
		r.status.State = runningState
		if hooked {
			r.status.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		}
		// Like the kubelet, a container without readiness or startup probe is
		// Ready in the status that first shows it running (not a write later).
		probeless := !r.init && !r.ephemeral && r.c.ReadinessProbe == nil && r.c.StartupProbe == nil
		r.status.Ready = wasAdopted && r.adoptedReady && !r.init || probeless && !hooked
		r.status.Started = api.Ptr(r.c.StartupProbe == nil && !r.init && !hooked)
		if r.init {
			r.status.Started = api.Ptr(false)
		}
		stopping := r.stopping
		r.mu.Unlock()
		if stopping {
			// The pod began terminating while this container started.
			go r.stopBy(context.WithoutCancel(ctx), id)
		}
		r.w.markDirty()
		if !wasAdopted {
			r.flushPulled(ctx)
			a.rec.Event(ctx, r.w.current(), "Normal", "Started", "Started container "+r.c.Name)
		}
		if hooked && r.postStart(ctx, id) {
			r.setIfCurrent(id, func(s *corev1.ContainerStatus) {
				s.State = runningState
				s.Started = api.Ptr(r.c.StartupProbe == nil && !r.init)
				s.Ready = s.Ready || probeless
			})
		}

		probeCtx, cancelProbes := context.WithCancel(ctx)
		if !r.init && !r.ephemeral {
			go r.probe(probeCtx, id)
		}
		rotateDone := make(chan struct{})
		go func() { defer close(rotateDone); r.rotateLogs(probeCtx, spec.LogPath) }()
		st, err := a.rt.Wait(context.WithoutCancel(ctx), id)
		cancelProbes()
		<-rotateDone
		if err != nil {
			st = cri.ContainerStatus{ExitCode: 128, Reason: "Error", FinishedAt: time.Now()}
		}
		term := &corev1.ContainerStateTerminated{
			ExitCode: int32(st.ExitCode), Reason: st.Reason,
			StartedAt:   api.NewTime(startedAt.UTC().Truncate(time.Second)),
			FinishedAt:  api.NewTime(st.FinishedAt.UTC().Truncate(time.Second)),
			ContainerID: a.rt.Name() + "://" + id,
		}
		if term.Reason == "" {
			term.Reason = "Completed"
			if st.ExitCode != 0 {
				term.Reason = "Error"
			}
		}
		if st.Reason == cri.ReasonStatusUnknown {
			term.Message = "The container exited while the node agent was not running; its exit status is unknown"
		} else if st.ExitCode > 128 && st.ExitCode < 160 {
			term.Signal = int32(st.ExitCode - 128)
		}
		if msg := terminationMessage(context.WithoutCancel(ctx), r.c, spec, st.ExitCode); msg != "" {
			if term.Message != "" {
				term.Message += ": "
			}
			term.Message += msg
		}
		// A container killed because its image changed restarts whatever
		// its restart policy, at once, as the kubelet restarts a container
		// whose definition changed.
		changed := r.takeChanged()
		restart := !r.isStopping() && ctx.Err() == nil && (changed || r.shouldRestart(st.ExitCode))
		if changed {
			backoff = 0
		}
		r.mu.Lock()
		r.running = false
		close(exited)
		// A regular init container that succeeded stays Ready, as the
		// kubelet reports it (upstream's InitContainer conformance specs).
		r.status.Ready = !restart && r.init && r.c.RestartPolicy == nil && st.ExitCode == 0
		if restart {
			r.status.LastTerminationState = corev1.ContainerState{Terminated: term}
		} else {
			r.status.State = corev1.ContainerState{Terminated: term}
			r.finished = true
		}
		r.mu.Unlock()
		r.w.markDirty()
		if !restart {
			return st.ExitCode == 0
		}
		if st.FinishedAt.Sub(startedAt) >= a.opts.BackOffResetAfter {
			backoff = 0
		}
		if backoff > 0 {
			msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", backoff, r.c.Name, r.w.current().Name, r.w.current().Namespace, r.w.uid)
			r.setStatus(func(s *corev1.ContainerStatus) {
				s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: msg}}
			})
			a.rec.Event(ctx, r.w.current(), "Warning", "BackOff", "Back-off restarting failed container "+r.c.Name)
			if !sleepCtx(ctx, backoff) {
				return false
			}
		}
		backoff = r.nextBackoff(backoff)
		_ = a.removeContainer(ctx, id)
		restarts++
	}
}

// startOutcome says how startAttempt went.
type startOutcome int

const (
	startStarted startOutcome = iota // the container runs
	startRetry                       // failed; the back-off was slept, try again
	startGiveUp                      // ctx ended or the container cannot run
)

// startAttempt resolves and starts attempt of the container, reporting
// image pull failures (ensureImage), CreateContainerConfigError,
// CreateContainerError and ErrImageNeverPull with their back-offs.
func (r *containerRunner) startAttempt(ctx context.Context, attempt int, backoff, configBackoff *time.Duration) (string, cri.ContainerSpec, startOutcome) {
	a := r.w.a
	if !r.ensureImage(ctx) { // pulls by imagePullPolicy (pull.go)
		if ctx.Err() != nil {
			return "", cri.ContainerSpec{}, startGiveUp
		}
		return "", cri.ContainerSpec{}, startRetry
	}
	spec, err := r.w.containerSpec(ctx, r.container(), attempt)
	if err != nil && ctx.Err() != nil {
		return "", spec, startGiveUp
	}
	if err != nil {
		r.flushPulled(ctx)
		reason := "CreateContainerConfigError"
		r.setStatus(func(s *corev1.ContainerStatus) {
			s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: err.Error()}}
		})
		a.rec.Event(ctx, r.w.current(), "Warning", "Failed", "Error: "+err.Error())
		if !sleepCtx(ctx, *configBackoff) {
			return "", spec, startGiveUp
		}
		*configBackoff = min(2**configBackoff, 10*time.Second)
		return "", spec, startRetry
	}
	if err := os.MkdirAll(filepath.Dir(spec.LogPath), 0o755); err != nil {
		r.flushPulled(ctx)
		r.w.setMessage(fmt.Sprintf("create log dir: %v", err))
		return "", spec, startGiveUp
	}
	if r.ephemeral {
		spec.TargetID = r.w.targetID(r.target)
	}
	_ = os.Remove(spec.LogPath)
	if attempt >= 2 {
		_ = os.Remove(r.logPath(attempt - 2))
		_ = os.Remove(r.logPath(attempt-2) + ".1")
	}
	id, err := a.startContainer(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return "", spec, startGiveUp
		}
		r.flushPulled(ctx)
		reason := "CreateContainerError"
		if errors.Is(err, cri.ErrImageNotPresent) {
			reason = "ErrImageNeverPull"
		}
		r.setStatus(func(s *corev1.ContainerStatus) {
			s.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: err.Error()}}
		})
		a.rec.Event(ctx, r.w.current(), "Warning", "Failed", "Error: "+err.Error())
		*backoff = r.nextBackoff(*backoff)
		if !sleepCtx(ctx, *backoff) {
			return "", spec, startGiveUp
		}
		return "", spec, startRetry
	}
	return id, spec, startStarted
}

func (r *containerRunner) nextBackoff(cur time.Duration) time.Duration {
	o := r.w.a.opts
	if cur == 0 {
		return o.CrashLoopBackOffBase
	}
	return min(2*cur, o.CrashLoopBackOffMax)
}

// rotateLogs rotates the current log by size while the container runs.
func (r *containerRunner) rotateLogs(ctx context.Context, path string) {
	for sleepCtx(ctx, 10*time.Second) {
		if _, err := logs.Rotate(path, r.w.a.opts.MaxLogBytes); err != nil {
			r.w.log.V(1).Info("Log rotation failed", "error", err.Error())
		}
	}
}

// container is the container's spec as the next start uses it: the one the
// worker began with, on the latest image the pod spec names.
func (r *containerRunner) container() corev1.Container {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.c
	c.Image = r.image
	return c
}

// setImage takes the pod spec's image for the container (the one field of a
// container an update may change). When it differs from the one the
// running container was started on, that container is killed and started
// again on the new image, as the kubelet does; a container waiting to start
// uses it at its next attempt, and one that finished for good stays so.
func (r *containerRunner) setImage(image string) {
	r.mu.Lock()
	if image == r.image {
		r.mu.Unlock()
		return
	}
	r.image = image
	// A regular init container runs to its end on the image it started with.
	restartable := !r.init || r.c.RestartPolicy != nil
	id, running := r.id, r.running && !r.stopping && restartable
	if running {
		r.changed = true
	}
	r.mu.Unlock()
	if running {
		r.restartNow(id, fmt.Sprintf("Container %s definition changed, will be restarted", r.c.Name))
	}
}

// takeChanged reports (and clears) whether the last container was killed
// because its image changed.
func (r *containerRunner) takeChanged() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := r.changed
	r.changed = false
	return changed
}

// restartNow kills the current container (liveness/startup failure); the run
// loop restarts it by policy.
func (r *containerRunner) restartNow(id, why string) {
	grace := 30 * time.Second
	if g := r.w.current().Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	go r.w.a.rec.Event(r.w.a.ctx, r.w.current(), "Normal", "Killing", why)
	if err := r.w.a.stopContainer(context.WithoutCancel(r.w.a.ctx), id, grace); err != nil {
		r.w.log.Error(err, "Stop container failed", "container", r.c.Name)
	}
}

// removeAll removes every runtime container this runner created.
func (r *containerRunner) removeAll(ctx context.Context) {
	r.mu.Lock()
	ids := r.ids
	r.ids = nil
	r.mu.Unlock()
	for _, id := range ids {
		_ = r.w.a.removeContainer(ctx, id)
	}
}
