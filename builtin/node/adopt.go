package node

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/framework/api"
)

// Re-adoption after an agent restart. A runtime that implements
// cri.Lister (the process runtime with a StateDir) reports the containers
// an earlier agent started. At start-up the agent groups them by pod UID and
// reserves each pod's IP; a pod worker created for one of those pods takes its
// containers: the newest attempt of each container is watched instead of
// started again (restartCount = its attempt, its lastState from the pod's
// status), older attempts are only removed with the pod, init containers are
// not run again once a regular container was adopted, and volume directories
// that exist are kept (the adopted processes have them mounted). Containers
// whose pod is gone (or finished) once the pod informer synced are orphans:
// they are stopped and removed with their pod directory.

// adoptable are the containers found at start-up, by pod UID.
type adoptable struct {
	mu    sync.Mutex
	byPod map[string][]cri.ContainerInfo // guarded by mu
}

// loadAdoptable lists the runtime's containers and reserves their pods' IPs.
func (a *Agent) loadAdoptable(ctx context.Context) {
	l, ok := a.rt.(cri.Lister)
	if !ok {
		return
	}
	list, err := l.List(ctx)
	if err != nil {
		a.log.Error(err, "Listing the runtime's containers failed; none are adopted")
		return
	}
	by := map[string][]cri.ContainerInfo{}
	for _, c := range list {
		by[c.Spec.PodUID] = append(by[c.Spec.PodUID], c)
	}
	for uid, cs := range by {
		for _, c := range cs {
			if c.Spec.PodIP != "" && c.Spec.PodIP != a.opts.InternalIP {
				if err := a.ipam.reserve(uid, c.Spec.PodIP); err != nil {
					a.log.Error(err, "Cannot keep the pod IP of an adopted container", "pod", c.Spec.PodNamespace+"/"+c.Spec.PodName)
				}
				break
			}
		}
	}
	a.adoptable.mu.Lock()
	a.adoptable.byPod = by
	a.adoptable.mu.Unlock()
	if len(list) > 0 {
		a.log.Info("Found containers of an earlier agent", "containers", len(list), "pods", len(by))
	}
}

// takeAdoptable hands a new pod worker the containers found for its pod.
func (a *Agent) takeAdoptable(uid string) []cri.ContainerInfo {
	a.adoptable.mu.Lock()
	defer a.adoptable.mu.Unlock()
	cs := a.adoptable.byPod[uid]
	delete(a.adoptable.byPod, uid)
	return cs
}

// assignAdopted gives each runner of a new worker the newest container of
// its name (to watch) and the IDs of older attempts (to remove with the pod).
func (w *podWorker) assignAdopted() {
	cs := w.a.takeAdoptable(w.uid)
	if len(cs) == 0 {
		return
	}
	pod := w.current()
	for _, r := range slices.Concat(w.inits, w.ctrs) {
		var newest *cri.ContainerInfo
		for i := range cs {
			c := &cs[i]
			if c.Spec.Name != r.c.Name {
				continue
			}
			r.ids = append(r.ids, c.Status.ID)
			if newest == nil || c.Spec.Attempt > newest.Spec.Attempt {
				newest = c
			}
		}
		if newest == nil {
			continue
		}
		r.adopted, r.wasAdopted = newest, true
		for _, s := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
			if s.Name == r.c.Name {
				r.status.LastTerminationState = s.LastTerminationState
				// Keep it Ready until a probe says otherwise: no endpoint flaps
				// because the agent restarted.
				r.adoptedReady = s.Ready && s.ContainerID == w.a.rt.Name()+"://"+newest.Status.ID && newest.Status.State == cri.StateRunning
			}
		}
		// Report the adopted state from the first status write on.
		r.status.ContainerID = w.a.rt.Name() + "://" + newest.Status.ID
		r.status.RestartCount = int32(newest.Spec.Attempt)
		if newest.Status.State == cri.StateRunning {
			// Attached at once, so a termination that starts before the run
			// loop gets to it stops it gracefully (preStop, SIGTERM).
			r.id, r.attempt, r.running = newest.Status.ID, newest.Spec.Attempt, true
			r.status.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: api.NewTime(newest.Status.StartedAt.UTC().Truncate(time.Second))}}
			r.status.Ready = r.adoptedReady && !r.init
			r.status.Started = api.Ptr(r.c.StartupProbe == nil && !r.init)
		}
		w.log.Info("Adopting container", "container", r.c.Name, "id", newest.Status.ID, "state", newest.Status.State, "attempt", newest.Spec.Attempt)
	}
	// Others are ephemeral containers: never run twice (ephemeral.go), so
	// what an earlier agent started of them is stopped and removed.
	for _, c := range cs {
		if !slices.ContainsFunc(slices.Concat(w.inits, w.ctrs), func(r *containerRunner) bool { return r.c.Name == c.Spec.Name }) {
			w.log.Info("Removing an ephemeral container of an earlier agent", "container", c.Spec.Name, "id", c.Status.ID)
			go func() { _ = w.a.rt.Remove(context.WithoutCancel(w.a.ctx), c.Status.ID) }()
		}
	}
	if w.adoptedMain() {
		// The sandbox and the init containers were done before the restart.
		w.sandboxOK, w.initDone = true, true
		if !pod.Spec.HostNetwork {
			for _, c := range cs {
				if c.Spec.PodIP != "" {
					w.podIP = c.Spec.PodIP
				}
			}
		}
	}
}

// adoptedMain reports whether a regular container of the pod was adopted (so
// its init containers completed before the agent restarted).
func (w *podWorker) adoptedMain() bool {
	for _, r := range w.ctrs {
		if r.wasAdopted {
			return true
		}
	}
	return false
}

// takeAdopted returns the container to watch instead of starting the first
// attempt (nil when none).
func (r *containerRunner) takeAdopted() *cri.ContainerInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.adopted
	r.adopted = nil
	return c
}

// completeInit marks an init container of an adopted pod as completed without
// running it again, keeping the status the pod reported.
func (r *containerRunner) completeInit() {
	term := &corev1.ContainerStateTerminated{Reason: "Completed"}
	for _, s := range r.w.current().Status.InitContainerStatuses {
		if s.Name == r.c.Name && s.State.Terminated != nil {
			term = s.State.Terminated
		}
	}
	r.mu.Lock()
	r.status.State = corev1.ContainerState{Terminated: term}
	r.finished = true
	r.mu.Unlock()
	r.w.markDirty()
}

// removeOrphans stops and removes the adopted containers no pod worker took:
// their pod is gone, or finished and being deleted.
func (a *Agent) removeOrphans(ctx context.Context, pods []*corev1.Pod) {
	live := map[string]bool{}
	for _, p := range pods {
		finished := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		if !(p.DeletionTimestamp != nil && finished) {
			live[p.UID] = true
		}
	}
	a.adoptable.mu.Lock()
	var orphans []cri.ContainerInfo
	for uid, cs := range a.adoptable.byPod {
		if !live[uid] {
			orphans = append(orphans, cs...)
			delete(a.adoptable.byPod, uid)
		}
	}
	a.adoptable.mu.Unlock()
	uids := map[string]bool{}
	for _, c := range orphans {
		uids[c.Spec.PodUID] = true
		if c.Status.State == cri.StateRunning {
			a.log.Info("Stopping orphaned container", "pod", c.Spec.PodNamespace+"/"+c.Spec.PodName, "container", c.Spec.Name, "id", c.Status.ID)
			if err := a.stopContainer(ctx, c.Status.ID, 2*time.Second); err != nil {
				a.log.Error(err, "Stop orphaned container failed", "id", c.Status.ID)
			}
		}
		if err := a.removeContainer(ctx, c.Status.ID); err != nil {
			a.log.Error(err, "Remove orphaned container failed", "id", c.Status.ID)
		}
	}
	for uid := range uids {
		a.ipam.release(uid)
		unmountVolumes(filepath.Join(a.opts.RootDir, "pods", uid, "volumes"))
		_ = os.RemoveAll(filepath.Join(a.opts.RootDir, "pods", uid))
	}
}

// keepVolume reports whether the volume directory dir of an adopted pod is
// kept as it is (its containers have it mounted).
func (w *podWorker) keepVolume(dir string) bool {
	if !w.adoptedMain() {
		return false
	}
	_, err := os.Stat(dir)
	return err == nil
}
