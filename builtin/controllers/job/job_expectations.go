package job

import (
	"strconv"
	"sync"
	"time"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
)

// The controller reads Jobs and pods from the cache, which trails the server.
// The tracking-finalizer protocol (job_tracking.go) decides from what it
// reads, so a decision made on a cache that does not show the controller's own
// last writes yet would be wrong: a pod created a moment ago and not cached
// yet would be created again; a pod whose finalizer was removed but whose Job
// status (recording it) is not cached yet would never be counted, and the Job
// would replace it. Kubernetes' job controller guards this with creation,
// deletion and finalizer-removal expectations; here every write the controller
// makes for a Job is remembered as a resourceVersion the cache must reach
// before the Job is reconciled again:
//
//   - the Job: the resourceVersion its last status write returned; the cached
//     Job must be at least that version;
//   - its pods: the highest resourceVersion a pod create or patch returned; the
//     pod informer (whose resourceVersion advances with every event it
//     applies, in the server's order) must have reached it;
//   - pods it deleted (a delete answers without the new version): each must be
//     gone from the cache or show its deletionTimestamp.
//
// Until the cache shows them the Job waits (its own write events requeue it).
// podutil.Expectations, which the ReplicaSet and DaemonSet controllers use,
// counts creations and deletions only; a Job also waits for its status and
// finalizer writes, and one resourceVersion comparison covers them all.
// Resource versions are compared as the numbers our server issues; one that is
// not a number never makes a Job wait. An expectation not met within
// expectationsTimeout (a watch that lost events) is dropped, as Kubernetes'
// expire after five minutes.
const expectationsTimeout = time.Minute

// expectations holds, per Job, the writes the cache has not shown yet. Its
// methods are safe for concurrent use; the workqueue never hands one Job to
// two workers at once.
type expectations struct {
	mu   sync.Mutex
	jobs map[client.ObjectKey]*expected
}

// expected is what one Job's cache must show.
type expected struct {
	jobUID  string    // the Job the writes were made for
	jobRV   uint64    // its resourceVersion after the last status write
	podRV   uint64    // the highest resourceVersion of a pod write
	deleted uidSet    // pods deleted (nil when none)
	since   time.Time // when the oldest unobserved write was made
}

func newExpectations() *expectations {
	return &expectations{jobs: map[client.ObjectKey]*expected{}}
}

// entry returns the record of key for the Job of uid, starting a new one at
// now; a record for another Job of that name is replaced. Callers hold mu.
func (e *expectations) entry(key client.ObjectKey, uid string, now time.Time) *expected {
	x := e.jobs[key]
	if x == nil || x.jobUID != uid {
		x = &expected{jobUID: uid, since: now}
		e.jobs[key] = x
	}
	return x
}

// wroteJob records the status write that left job at its resourceVersion.
func (e *expectations) wroteJob(job *batchv1.Job, now time.Time) {
	rv, ok := parseRV(job.ResourceVersion)
	if !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.entry(client.ObjectKeyFromObject(job), job.UID, now)
	x.jobRV = max(x.jobRV, rv)
}

// wrotePod records a create or patch of pod (as the server returned it).
func (e *expectations) wrotePod(pod *corev1.Pod, now time.Time) {
	key, uid, ok := jobOf(pod)
	if !ok {
		return
	}
	rv, ok := parseRV(pod.ResourceVersion)
	if !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.entry(key, uid, now)
	x.podRV = max(x.podRV, rv)
}

// deletedPod records the deletion of pod.
func (e *expectations) deletedPod(pod *corev1.Pod, now time.Time) {
	key, uid, ok := jobOf(pod)
	if !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.entry(key, uid, now)
	if x.deleted == nil {
		x.deleted = uidSet{}
	}
	x.deleted[pod.UID] = struct{}{}
}

// observed reports whether the cache shows every write recorded for job:
// job as read from the cache, pods its pods as listed at podsRV. A met
// expectation (or one past expectationsTimeout) is dropped.
func (e *expectations) observed(job *batchv1.Job, podsRV string, pods []corev1.Pod, now time.Time) bool {
	key := client.ObjectKeyFromObject(job)
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.jobs[key]
	if x == nil {
		return true
	}
	if x.jobUID != job.UID || now.Sub(x.since) > expectationsTimeout {
		delete(e.jobs, key)
		return true
	}
	if rv, ok := parseRV(job.ResourceVersion); ok && rv < x.jobRV {
		return false
	}
	if rv, ok := parseRV(podsRV); ok && rv < x.podRV {
		return false
	}
	for i := range pods {
		p := &pods[i]
		if x.deleted.Has(p.UID) && p.DeletionTimestamp == nil {
			return false
		}
	}
	delete(e.jobs, key)
	return true
}

// forget drops what is recorded for the Job key (it is gone).
func (e *expectations) forget(key client.ObjectKey) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.jobs, key)
}

// jobOf returns the key and UID of the Job controlling pod.
func jobOf(pod *corev1.Pod) (client.ObjectKey, string, bool) {
	ref := controllerutil.GetControllerOf(pod)
	if ref == nil || ref.Kind != "Job" {
		return client.ObjectKey{}, "", false
	}
	return client.ObjectKey{Namespace: pod.Namespace, Name: ref.Name}, ref.UID, true
}

// parseRV reads a resourceVersion as the number our server issues.
func parseRV(rv string) (uint64, bool) {
	n, err := strconv.ParseUint(rv, 10, 64)
	return n, err == nil
}
