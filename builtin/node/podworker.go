package node

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/kubeletmetrics"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// podWorker runs one pod: volumes, init containers, containers, status,
// termination.
type podWorker struct {
	a   *Agent
	log logr.Logger
	uid string
	dir string // <root>/pods/<uid>

	resyncOnce sync.Once // starts resyncVolumes (volumes.go) after the first setup

	mu          sync.Mutex
	pod         *corev1.Pod // latest seen; shared, never modified; guarded by mu
	gone        bool        // the pod left the API; guarded by mu
	terminating bool        // guarded by mu
	podIP       string      // guarded by mu
	netns       string      // the pod's network namespace (CNI); guarded by mu
	startTime   api.Time    // guarded by mu
	sandboxOK   bool        // IP and volumes ready; guarded by mu
	// sandboxParts counts the parts of the sandbox not ready yet (the
	// network, the volumes with DNS); the last one sets sandboxOK and closes
	// sandboxReady (sandboxPartDone). Guarded by mu.
	sandboxParts int
	sandboxReady chan struct{}
	sandboxStart time.Time                                       // when lifecycle began preparing the sandbox
	initDone     bool                                            // guarded by mu
	initFailed   bool                                            // an init container failed for good; guarded by mu
	message      string                                          // pod-level problem (volumes); guarded by mu
	conds        map[corev1.PodConditionType]corev1.PodCondition // last reported; guarded by mu
	inits        []*containerRunner
	ctrs         []*containerRunner
	ephs         []*containerRunner // ephemeral containers, added as the spec gains them (ephemeral.go); guarded by mu

	// Termination (termination.go); guarded by mu.
	killed       bool          // terminate stopped every container
	deletionSeen time.Time     // when terminate began
	killBy       time.Time     // termination deadline, only moved earlier
	shortened    chan struct{} // closed when killBy moves
	// spec.activeDeadlineSeconds passed (activedeadline.go); guarded by mu.
	deadlineExceeded bool
	// The node refused the pod before running it (sysctl.go, hostports.go): its reason and
	// message; guarded by mu.
	rejectReason, rejectMessage string

	statusMu   sync.Mutex // serialises status writes
	lastStatus string     // the last status written; guarded by statusMu
	seen       time.Time  // when the agent first saw the pod (kubelet_pod_start_duration_seconds)
	started    bool       // the pod's start was recorded; guarded by statusMu

	changed chan struct{} // the pod spec/metadata changed or it went away
	dirty   chan struct{} // the status must be recomputed
	stop    context.CancelFunc
	runCtx  context.Context
	done    chan struct{} // closed when run returns
}

func newPodWorker(a *Agent, pod *corev1.Pod) *podWorker {
	w := &podWorker{a: a, uid: pod.UID, pod: pod, dir: filepath.Join(a.opts.RootDir, "pods", pod.UID),
		log:     a.log.WithValues("pod", pod.Namespace+"/"+pod.Name),
		changed: make(chan struct{}, 1), dirty: make(chan struct{}, 1), done: make(chan struct{}),
		sandboxParts: 2, sandboxReady: make(chan struct{}),
		conds: map[corev1.PodConditionType]corev1.PodCondition{}, startTime: api.Now(), seen: time.Now()}
	if pod.Status.StartTime != nil {
		w.startTime = *pod.Status.StartTime
	}
	w.runCtx, w.stop = context.WithCancel(a.ctx)
	for i := range pod.Spec.InitContainers {
		w.inits = append(w.inits, newContainerRunner(w, pod.Spec.InitContainers[i], true))
	}
	for i := range pod.Spec.Containers {
		w.ctrs = append(w.ctrs, newContainerRunner(w, pod.Spec.Containers[i], false))
	}
	w.assignAdopted() // containers an earlier agent started (adopt.go)
	return w
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (w *podWorker) update(pod *corev1.Pod) {
	w.mu.Lock()
	w.pod = pod
	w.mu.Unlock()
	signal(w.changed)
	w.startEphemerals(w.runCtx)
	if pod.DeletionTimestamp == nil {
		w.updateImages(pod)
	}
}

// updateImages hands each container the image the pod spec now names (an
// update may change a container's image and nothing else of it): regular
// containers and sidecars are restarted on it, as the kubelet restarts a
// container whose definition changed; a regular init container is not
// restarted (one that has not started yet takes the new image).
func (w *podWorker) updateImages(pod *corev1.Pod) {
	for _, r := range w.inits {
		for _, c := range pod.Spec.InitContainers {
			if c.Name == r.c.Name {
				r.setImage(c.Image)
			}
		}
	}
	for _, r := range w.ctrs {
		for _, c := range pod.Spec.Containers {
			if c.Name == r.c.Name {
				r.setImage(c.Image)
			}
		}
	}
}

func (w *podWorker) markGone() {
	w.mu.Lock()
	w.gone = true
	w.mu.Unlock()
	signal(w.changed)
}

func (w *podWorker) current() *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pod
}

func (w *podWorker) markDirty() { signal(w.dirty) }

// stopping reports whether the pod is being deleted or gone, or the agent
// stops its containers (shutdown): containers ending then have not finished
// for good.
func (w *podWorker) stopping() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.terminating || w.gone || w.pod.DeletionTimestamp != nil
}

// shouldTerminate reports whether the pod is being deleted or gone.
func (w *podWorker) shouldTerminate() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gone || w.pod.DeletionTimestamp != nil
}

// run is the worker's life: set up, run containers, wait for deletion,
// terminate, clean up.
func (w *podWorker) run() {
	defer close(w.done)
	statusDone := make(chan struct{})
	go func() { defer close(statusDone); w.runStatus() }()
	defer func() {
		w.stop()
		<-statusDone
	}()

	lifecycle := make(chan struct{})
	go func() { defer close(lifecycle); w.lifecycle(w.runCtx) }()

	for !w.shouldTerminate() {
		due, stopTimer := w.activeDeadlineTimer()
		select {
		case <-w.changed:
		case <-due:
			w.exceedDeadline()
		case <-w.a.ctx.Done():
			stopTimer()
			<-lifecycle
			return // shutdown() stops the containers
		}
		stopTimer()
	}
	t0 := time.Now()
	w.terminate()
	w.a.metrics.PodWorker(kubeletmetrics.WorkerKill, t0)
	w.stop()
	<-lifecycle
	w.cleanup()
}

// lifecycle prepares the sandbox, runs init containers, then containers.
func (w *podWorker) lifecycle(ctx context.Context) {
	if err := checkSysctls(w.current()); err != nil {
		w.reject(ctx, reasonSysctlForbidden, err.Error())
		return
	}
	if !w.a.ports.claim(w.uid, podHostPorts(w.current())) {
		w.reject(ctx, reasonNodePorts, messageNodePorts)
		return
	}
	w.sandboxStart = time.Now()
	netDone, ok := w.startNetwork(ctx, w.current())
	if !ok {
		return
	}
	// The network's goroutine ends with ctx at the latest. A pod whose
	// containers all ended for good gives back its host ports and network
	// then, as the kubelet stops a terminal pod's sandbox (status keeps the
	// pod IP); a pod being deleted does so in cleanup.
	finished := false
	defer func() {
		<-netDone
		if finished && ctx.Err() == nil && !w.stopping() {
			w.releaseNetwork(ctx)
			w.a.ports.release(w.uid)
		}
	}()
	backoff := time.Second
	for {
		err := w.setupVolumes(ctx)
		if err == nil {
			err = w.setupDNS(ctx)
		}
		if err == nil {
			break
		}
		w.setMessage(err.Error())
		w.a.rec.Event(ctx, w.current(), "Warning", "FailedMount", err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
	w.sandboxPartDone()

	for _, r := range w.inits {
		if !r.run(ctx) {
			if ctx.Err() == nil {
				w.mu.Lock()
				w.initFailed = true
				w.mu.Unlock()
				w.markDirty()
				finished = true
			}
			return
		}
	}
	w.mu.Lock()
	w.initDone = true
	w.mu.Unlock()
	w.markDirty()
	w.startEphemerals(ctx)
	var wg sync.WaitGroup
	for _, r := range w.ctrs {
		wg.Add(1)
		go func() { defer wg.Done(); r.run(ctx) }()
	}
	wg.Wait()
	w.markDirty()
	finished = true
}

func (w *podWorker) setMessage(m string) {
	w.mu.Lock()
	w.message = m
	w.mu.Unlock()
	w.markDirty()
}

// shutdown is called when the agent stops: stop containers, keep the pod.
func (w *podWorker) shutdown(grace time.Duration) {
	w.mu.Lock()
	w.terminating = true
	w.mu.Unlock()
	w.setDeadline(time.Now().Add(grace))
	w.stopAll()
	<-w.done
	for _, r := range w.runners() {
		r.removeAll(context.Background())
	}
	w.a.ipam.release(w.uid)
}

// cleanup removes containers, volumes and the IP, then completes the deletion.
func (w *podWorker) cleanup() {
	ctx := w.a.ctx
	// Containers are removed even when the agent stops meanwhile: this
	// worker may already be gone from the set shutdown stops.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, r := range w.runners() {
		r.removeAll(rctx)
	}
	w.teardownVolumes()
	w.releaseNetwork(ctx)
	w.a.ports.release(w.uid)
	w.mu.Lock()
	gone := w.gone
	pod := w.pod
	w.mu.Unlock()
	if !gone {
		w.writeStatus(ctx)
		w.completeDeletion(ctx, pod)
	}
	_ = os.RemoveAll(w.dir)
}

// runStatus writes the pod status whenever it changes (coalesced).
func (w *podWorker) runStatus() {
	for {
		select {
		case <-w.runCtx.Done():
			return
		case <-w.dirty:
		}
		w.writeStatus(w.runCtx)
		// Coalesce bursts a little.
		select {
		case <-w.runCtx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (w *podWorker) writeStatus(ctx context.Context) {
	w.statusMu.Lock()
	defer w.statusMu.Unlock()
	w.mu.Lock()
	if w.gone {
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	st := w.computeStatus()
	w.recordStart(st)
	b, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		return
	}
	pod := w.current()
	if w.lastStatus == string(b) {
		return
	}
	defer w.a.metrics.PodWorker(kubeletmetrics.WorkerSync, time.Now())
	p := &corev1.Pod{}
	p.Namespace, p.Name = pod.Namespace, pod.Name
	if err := w.a.c.Status().Patch(ctx, p, client.RawPatch(client.MergePatchType, b)); err != nil {
		if client.IgnoreNotFound(err) != nil && ctx.Err() == nil {
			w.log.V(1).Info("Pod status update failed", "error", err.Error())
			go func() { time.Sleep(time.Second); w.markDirty() }()
		}
		return
	}
	w.lastStatus = string(b)
}

// recordStart records kubelet_pod_start_duration_seconds the first time st
// shows the pod running with all its containers running. Called with
// statusMu held.
func (w *podWorker) recordStart(st corev1.PodStatus) {
	if w.started || st.Phase != corev1.PodRunning || len(st.ContainerStatuses) == 0 {
		return
	}
	for _, cs := range st.ContainerStatuses {
		if cs.State.Running == nil {
			return
		}
	}
	w.started = true
	for _, r := range w.ctrs {
		if r.wasAdopted { // started by an earlier agent: not a start seen here
			return
		}
	}
	w.a.metrics.PodStarted(time.Since(w.seen))
}

// reject fails the pod before anything of it runs, as the kubelet's
// admission rejects a pod: phase Failed, the reason, and "Pod was rejected:
// <message>".
func (w *podWorker) reject(ctx context.Context, reason, message string) {
	w.mu.Lock()
	w.rejectReason, w.rejectMessage = reason, "Pod was rejected: "+message
	w.mu.Unlock()
	w.log.Info("Pod rejected", "reason", reason, "message", message)
	w.a.rec.Event(ctx, w.current(), "Warning", reason, message)
	w.markDirty()
}
