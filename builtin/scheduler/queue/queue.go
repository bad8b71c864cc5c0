package queue

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
)

// ErrClosed is returned by Pop after Close.
var ErrClosed = errors.New("scheduling queue: closed")

// QueuedPodInfo is a pod in the queue with its scheduling history.
type QueuedPodInfo struct {
	*plugin.PodInfo
	key string
	// Timestamp is when the pod was last added to the queue.
	Timestamp time.Time
	// Attempts counts scheduling attempts.
	Attempts int
	// InitialAttemptTimestamp is when the pod was first popped.
	InitialAttemptTimestamp time.Time
	// UnschedulablePlugins are the plugins that rejected the pod last time.
	UnschedulablePlugins map[string]struct{}
	// Gated is set while a PreEnqueue plugin holds the pod.
	Gated bool
	// GatingPlugin is the plugin holding a gated pod.
	GatingPlugin string
	// GatedMessage is that plugin's message.
	GatedMessage string
}

// Key returns the pod's queue key (its UID, or namespace/name).
func (q *QueuedPodInfo) Key() string { return q.key }

// Options configure a PriorityQueue; the zero value gives the defaults.
type Options struct {
	// InitialBackoff is the first backoff; default 1s.
	InitialBackoff time.Duration
	// MaxBackoff caps the backoff; default 10s.
	MaxBackoff time.Duration
	// MaxUnschedulableDuration is how long a pod stays parked without a
	// helpful event; default 5m.
	MaxUnschedulableDuration time.Duration
	// PreEnqueue checks a pod before it may enter activeQ (nil: always).
	PreEnqueue func(ctx context.Context, pod *corev1.Pod) *plugin.Status
	// EventsByPlugin lists the events each plugin registered
	// (plugin.EnqueueExtensions).
	EventsByPlugin map[string][]plugin.ClusterEventWithHint
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger logs queue moves at V(1).
	Logger logr.Logger
}

// PriorityQueue is the scheduling queue.
type PriorityQueue struct {
	opts Options

	// mu guards everything below; cond signals Pop.
	mu            sync.Mutex
	cond          *sync.Cond
	activeQ       *podHeap
	backoffQ      *podHeap
	unschedulable map[string]*QueuedPodInfo
	// inFlight are popped pods whose cycle has not called Done.
	inFlight map[string]struct{}
	// schedulingCycle counts Pops; moveRequestCycle is the cycle of the last
	// move request.
	schedulingCycle  int64
	moveRequestCycle int64
	closed           bool

	nominator *nominator
}

// New returns an empty queue.
func New(opts Options) *PriorityQueue {
	if opts.InitialBackoff <= 0 {
		opts.InitialBackoff = time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 10 * time.Second
	}
	if opts.MaxUnschedulableDuration <= 0 {
		opts.MaxUnschedulableDuration = 5 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	q := &PriorityQueue{
		opts:             opts,
		activeQ:          newPodHeap(Less),
		unschedulable:    map[string]*QueuedPodInfo{},
		inFlight:         map[string]struct{}{},
		moveRequestCycle: -1,
		nominator:        newNominator(),
	}
	q.backoffQ = newPodHeap(func(a, b *QueuedPodInfo) bool { return q.backoffExpiry(a).Before(q.backoffExpiry(b)) })
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Less orders activeQ: higher priority first, then earlier creation, then
// earlier enqueue, then key.
func Less(a, b *QueuedPodInfo) bool {
	pa, pb := priority(a.Pod), priority(b.Pod)
	if pa != pb {
		return pa > pb
	}
	ca, cb := a.Pod.CreationTimestamp.Time, b.Pod.CreationTimestamp.Time
	if !ca.Equal(cb) {
		return ca.Before(cb)
	}
	if !a.Timestamp.Equal(b.Timestamp) {
		return a.Timestamp.Before(b.Timestamp)
	}
	return a.key < b.key
}

func priority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// Key returns the queue key of a pod.
func Key(p *corev1.Pod) string {
	if p.UID != "" {
		return p.UID
	}
	return p.Namespace + "/" + p.Name
}

func (q *PriorityQueue) backoffDuration(p *QueuedPodInfo) time.Duration {
	d := q.opts.InitialBackoff
	for i := 1; i < p.Attempts; i++ {
		d *= 2
		if d >= q.opts.MaxBackoff {
			return q.opts.MaxBackoff
		}
	}
	return d
}

func (q *PriorityQueue) backoffExpiry(p *QueuedPodInfo) time.Time {
	return p.Timestamp.Add(q.backoffDuration(p))
}

func (q *PriorityQueue) newQueued(pod *corev1.Pod) *QueuedPodInfo {
	pi, err := plugin.NewPodInfo(pod)
	if err != nil {
		q.opts.Logger.V(1).Info("pod has invalid affinity terms", "pod", pod.Namespace+"/"+pod.Name, "err", err.Error())
	}
	return &QueuedPodInfo{PodInfo: pi, key: Key(pod), Timestamp: q.opts.Now()}
}

// runPreEnqueue returns false (and marks the pod gated) if PreEnqueue rejects.
func (q *PriorityQueue) runPreEnqueue(ctx context.Context, p *QueuedPodInfo) bool {
	if q.opts.PreEnqueue == nil {
		p.Gated = false
		return true
	}
	s := q.opts.PreEnqueue(ctx, p.Pod)
	p.Gated = !s.IsSuccess()
	if p.Gated {
		p.GatingPlugin, p.GatedMessage = s.Plugin(), s.Message()
	} else {
		p.GatingPlugin, p.GatedMessage = "", ""
	}
	return !p.Gated
}

// addToActiveLocked puts the pod in activeQ or, if gated, parks it.
func (q *PriorityQueue) addToActiveLocked(ctx context.Context, p *QueuedPodInfo) bool {
	if !q.runPreEnqueue(ctx, p) {
		q.unschedulable[p.key] = p
		return false
	}
	q.activeQ.add(p)
	q.cond.Broadcast()
	return true
}

// Add adds a new pending pod.
func (q *PriorityQueue) Add(ctx context.Context, pod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := q.newQueued(pod)
	q.removeEverywhereLocked(p.key)
	q.addToActiveLocked(ctx, p)
	q.nominator.add(p.PodInfo, nil)
}

func (q *PriorityQueue) removeEverywhereLocked(key string) {
	q.activeQ.remove(key)
	q.backoffQ.remove(key)
	delete(q.unschedulable, key)
}

// Update replaces a pending pod. A gated pod whose gate opens, or a parked pod
// whose spec changed, goes back to activeQ (or backoffQ while backing off).
func (q *PriorityQueue) Update(ctx context.Context, oldPod, newPod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := Key(newPod)
	q.nominator.update(oldPod, newPod)
	if p, ok := q.activeQ.get(key); ok {
		_ = p.PodInfo.Update(newPod)
		q.activeQ.add(p)
		return
	}
	if p, ok := q.backoffQ.get(key); ok {
		_ = p.PodInfo.Update(newPod)
		q.backoffQ.add(p)
		return
	}
	if p, ok := q.unschedulable[key]; ok {
		_ = p.PodInfo.Update(newPod)
		if p.Gated {
			if q.runPreEnqueue(ctx, p) {
				delete(q.unschedulable, key)
				q.activeQ.add(p)
				q.cond.Broadcast()
			}
			return
		}
		if oldPod != nil && specChanged(oldPod, newPod) {
			delete(q.unschedulable, key)
			q.moveLocked(ctx, p)
		}
		return
	}
	if _, ok := q.inFlight[key]; ok {
		return
	}
	// Unknown: treat as new.
	p := q.newQueued(newPod)
	q.addToActiveLocked(ctx, p)
}

// specChanged reports a change other than status and resourceVersion/
// managedFields, which may make the pod schedulable.
func specChanged(a, b *corev1.Pod) bool {
	if a.Generation != 0 || b.Generation != 0 {
		if a.Generation != b.Generation {
			return true
		}
	}
	return !equalLabels(a.Labels, b.Labels) || len(a.Spec.SchedulingGates) != len(b.Spec.SchedulingGates)
}

func equalLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// Delete removes a pod.
func (q *PriorityQueue) Delete(pod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.removeEverywhereLocked(Key(pod))
	q.nominator.delete(pod)
}

// Pop blocks until a pod is in activeQ (or ctx ends / the queue closes) and
// returns it, counting the attempt.
func (q *PriorityQueue) Pop(ctx context.Context) (*QueuedPodInfo, error) {
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		q.cond.Broadcast()
		q.mu.Unlock()
	})
	defer stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.activeQ.Len() == 0 {
		if q.closed {
			return nil, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q.cond.Wait()
	}
	p := q.activeQ.pop()
	p.Attempts++
	if p.InitialAttemptTimestamp.IsZero() {
		p.InitialAttemptTimestamp = q.opts.Now()
	}
	q.schedulingCycle++
	q.inFlight[p.key] = struct{}{}
	return p, nil
}

// SchedulingCycle returns the number of Pops so far.
func (q *PriorityQueue) SchedulingCycle() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.schedulingCycle
}

// Done marks the end of the pod's cycle (after it was re-queued or bound).
func (q *PriorityQueue) Done(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.inFlight, key)
}

// AddUnschedulableIfNotPresent returns a pod whose attempt failed: to
// backoffQ if a move request happened during its cycle or the failure was an
// error, else parked as unschedulable.
func (q *PriorityQueue) AddUnschedulableIfNotPresent(ctx context.Context, p *QueuedPodInfo, podSchedulingCycle int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.activeQ.get(p.key); ok {
		return
	}
	if _, ok := q.backoffQ.get(p.key); ok {
		return
	}
	if _, ok := q.unschedulable[p.key]; ok {
		return
	}
	p.Timestamp = q.opts.Now()
	if !q.runPreEnqueue(ctx, p) {
		q.unschedulable[p.key] = p
		return
	}
	if q.moveRequestCycle >= podSchedulingCycle || len(p.UnschedulablePlugins) == 0 {
		q.backoffQ.add(p)
		return
	}
	q.unschedulable[p.key] = p
}

// moveLocked puts a pod to backoffQ or activeQ depending on its backoff.
func (q *PriorityQueue) moveLocked(ctx context.Context, p *QueuedPodInfo) {
	if q.backoffExpiry(p).After(q.opts.Now()) {
		q.backoffQ.add(p)
		return
	}
	q.addToActiveLocked(ctx, p)
}

// MoveAllToActiveOrBackoffQueue moves the parked pods the event may help.
// preCheck, if set, must also accept the pod (e.g. a cheap node fit check).
func (q *PriorityQueue) MoveAllToActiveOrBackoffQueue(ctx context.Context, event plugin.ClusterEvent, oldObj, newObj any, preCheck func(*corev1.Pod) bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	moved := 0
	for key, p := range q.unschedulable {
		if p.Gated {
			continue
		}
		if preCheck != nil && !preCheck(p.Pod) {
			continue
		}
		if !q.worthRequeue(p, event, oldObj, newObj) {
			continue
		}
		delete(q.unschedulable, key)
		q.moveLocked(ctx, p)
		moved++
	}
	q.moveRequestCycle = q.schedulingCycle
	if moved > 0 {
		q.opts.Logger.V(1).Info("moved unschedulable pods", "event", event.Label, "count", moved)
	}
}

func (q *PriorityQueue) worthRequeue(p *QueuedPodInfo, event plugin.ClusterEvent, oldObj, newObj any) bool {
	if len(p.UnschedulablePlugins) == 0 || event.Resource == plugin.WildCard {
		return true
	}
	for name := range p.UnschedulablePlugins {
		evs, ok := q.opts.EventsByPlugin[name]
		if !ok {
			return true
		}
		for _, e := range evs {
			if !e.Event.Match(event) {
				continue
			}
			if e.QueueingHintFn == nil {
				return true
			}
			h, err := e.QueueingHintFn(p.Pod, oldObj, newObj)
			if err != nil || h == plugin.Queue {
				return true
			}
		}
	}
	return false
}

// Run flushes backoffQ as pods' backoff expires and moves pods parked longer
// than MaxUnschedulableDuration, until ctx ends; then closes the queue.
func (q *PriorityQueue) Run(ctx context.Context) {
	backoff := time.NewTicker(50 * time.Millisecond)
	defer backoff.Stop()
	parked := time.NewTicker(min(30*time.Second, q.opts.MaxUnschedulableDuration/2))
	defer parked.Stop()
	for {
		select {
		case <-ctx.Done():
			q.Close()
			return
		case <-backoff.C:
			q.flushBackoffQCompleted(ctx)
		case <-parked.C:
			q.flushUnschedulableLeftover(ctx)
		}
	}
}

func (q *PriorityQueue) flushBackoffQCompleted(ctx context.Context) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Now()
	for {
		p := q.backoffQ.peek()
		if p == nil || q.backoffExpiry(p).After(now) {
			return
		}
		q.backoffQ.pop()
		q.addToActiveLocked(ctx, p)
	}
}

func (q *PriorityQueue) flushUnschedulableLeftover(ctx context.Context) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Now()
	for key, p := range q.unschedulable {
		if p.Gated || now.Sub(p.Timestamp) <= q.opts.MaxUnschedulableDuration {
			continue
		}
		delete(q.unschedulable, key)
		q.moveLocked(ctx, p)
	}
}

// Close wakes Pop, which then returns ErrClosed.
func (q *PriorityQueue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// PendingPods returns the pods of every sub-queue, for debugging.
func (q *PriorityQueue) PendingPods() (active, backoff, unschedulable []*corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range q.activeQ.items {
		active = append(active, p.Pod)
	}
	for _, p := range q.backoffQ.items {
		backoff = append(backoff, p.Pod)
	}
	for _, p := range q.unschedulable {
		unschedulable = append(unschedulable, p.Pod)
	}
	return active, backoff, unschedulable
}

// Lens returns the sizes of activeQ, backoffQ and the parked set.
func (q *PriorityQueue) Lens() (active, backoff, unschedulable int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.activeQ.Len(), q.backoffQ.Len(), len(q.unschedulable)
}

// PendingCounts returns the sizes of activeQ and backoffQ, the number of
// parked pods that were tried, and the number of gated pods.
func (q *PriorityQueue) PendingCounts() (active, backoff, unschedulable, gated int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range q.unschedulable {
		if p.Gated {
			gated++
		}
	}
	return q.activeQ.Len(), q.backoffQ.Len(), len(q.unschedulable) - gated, gated
}

// Nominator returns the queue's PodNominator.
func (q *PriorityQueue) Nominator() plugin.PodNominator { return q.nominator }

// nominator implements plugin.PodNominator.
type nominator struct {
	// count is the number of nominated pods, read without the lock so that
	// Filter skips the lookup when nothing is nominated.
	count  atomic.Int64
	mu     sync.RWMutex
	byNode map[string][]*plugin.PodInfo
	byPod  map[string]string
}

func newNominator() *nominator {
	return &nominator{byNode: map[string][]*plugin.PodInfo{}, byPod: map[string]string{}}
}

func (n *nominator) add(pi *plugin.PodInfo, info *plugin.NominatingInfo) {
	n.AddNominatedPod(pi, info)
}

// AddNominatedPod implements plugin.PodNominator.
func (n *nominator) AddNominatedPod(pi *plugin.PodInfo, info *plugin.NominatingInfo) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(pi.Pod)
	node := pi.Pod.Status.NominatedNodeName
	if info.Mode() == plugin.ModeOverride {
		node = info.NominatedNodeName
	}
	if node == "" || pi.Pod.Spec.NodeName != "" {
		return
	}
	n.byPod[Key(pi.Pod)] = node
	n.byNode[node] = append(n.byNode[node], pi)
	n.count.Add(1)
}

func (n *nominator) update(oldPod, newPod *corev1.Pod) {
	n.mu.Lock()
	var info *plugin.NominatingInfo
	if node, ok := n.byPod[Key(newPod)]; ok && newPod.Status.NominatedNodeName == "" &&
		(oldPod == nil || oldPod.Status.NominatedNodeName == "") {
		// Keep a nomination the status does not show yet.
		info = &plugin.NominatingInfo{NominatedNodeName: node, NominatingMode: plugin.ModeOverride}
	}
	n.mu.Unlock()
	pi, _ := plugin.NewPodInfo(newPod)
	n.AddNominatedPod(pi, info)
}

func (n *nominator) delete(pod *corev1.Pod) { n.DeleteNominatedPodIfExists(pod) }

// DeleteNominatedPodIfExists implements plugin.PodNominator.
func (n *nominator) DeleteNominatedPodIfExists(pod *corev1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(pod)
}

func (n *nominator) deleteLocked(pod *corev1.Pod) {
	key := Key(pod)
	node, ok := n.byPod[key]
	if !ok {
		return
	}
	delete(n.byPod, key)
	n.count.Add(-1)
	list := slices.DeleteFunc(slices.Clone(n.byNode[node]), func(pi *plugin.PodInfo) bool { return Key(pi.Pod) == key })
	if len(list) == 0 {
		delete(n.byNode, node)
	} else {
		n.byNode[node] = list
	}
}

// HasNominatedPods reports whether any pod is nominated (without locking).
func (n *nominator) HasNominatedPods() bool { return n.count.Load() != 0 }

// NominatedPodsForNode implements plugin.PodNominator.
func (n *nominator) NominatedPodsForNode(nodeName string) []*plugin.PodInfo {
	if n.count.Load() == 0 {
		return nil
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return slices.Clone(n.byNode[nodeName])
}
