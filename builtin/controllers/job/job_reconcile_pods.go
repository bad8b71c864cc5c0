package job

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/record"
)

// completionIndexEnv is the env var carrying the index of an Indexed Job's pod.
const completionIndexEnv = "JOB_COMPLETION_INDEX"

// observed is what the Job's pods say right now.
type observed struct {
	active      []corev1.Pod // not terminal, not being deleted
	terminating []corev1.Pod // being deleted, not terminal
	ready       int32
	// restarts is the sum of the container restarts of the active pods
	// (restartPolicy OnFailure counts them against backoffLimit).
	restarts int32
	// consecutiveFailures are counted failures after the last success, and
	// lastFailure the latest of their finish times (for the backoff).
	consecutiveFailures int
	lastFailure         time.Time
	// byIndex is, per completion index, what the newest pod of that index
	// says (Indexed Jobs with backoffLimitPerIndex).
	byIndex map[int]indexState
	// delayed are failed pods whose finalizer stays until their index got a
	// replacement, so the index's failure count survives the pod's deletion.
	delayed uidSet
}

// indexState is the failure record of one index, from its newest pod.
type indexState struct {
	failures, ignored int32     // for the replacement pod's annotations
	failedAt          time.Time // when the newest pod failed; zero if it did not
}

// ownedPods keeps the pods whose controller is job.
func ownedPods(job *batchv1.Job, pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		for _, ref := range p.OwnerReferences {
			if ref.Controller != nil && *ref.Controller && ref.UID == job.UID {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// observe classifies pods.
func (r *reconciler) observe(job *batchv1.Job, pods []corev1.Pod) *observed {
	o := &observed{delayed: uidSet{}}
	var lastSuccess time.Time
	var failures []time.Time
	for _, p := range pods {
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			if t := podFinishTime(&p); t.After(lastSuccess) {
				lastSuccess = t
			}
		case p.Status.Phase == corev1.PodFailed:
			if action, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, &p); action == batchv1.PodFailurePolicyActionIgnore {
				continue
			}
			failures = append(failures, podFinishTime(&p))
		case p.DeletionTimestamp != nil:
			o.terminating = append(o.terminating, p)
		default:
			o.active = append(o.active, p)
			if isPodReady(&p) {
				o.ready++
			}
			for _, cs := range p.Status.ContainerStatuses {
				o.restarts += cs.RestartCount
			}
			for _, cs := range p.Status.InitContainerStatuses {
				o.restarts += cs.RestartCount
			}
		}
	}
	for _, at := range failures {
		if at.After(lastSuccess) || at.Equal(lastSuccess) && lastSuccess.IsZero() {
			o.consecutiveFailures++
			if at.After(o.lastFailure) {
				o.lastFailure = at
			}
		}
	}
	if isIndexed(job) && job.Spec.BackoffLimitPerIndex != nil {
		r.observeIndexes(job, pods, o)
	}
	return o
}

// observeIndexes fills o.byIndex and o.delayed from the newest pod of each
// index.
func (r *reconciler) observeIndexes(job *batchv1.Job, pods []corev1.Pod, o *observed) {
	newest := map[int]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		ix, ok := podIndex(p)
		if !ok || ix >= completions(job) {
			continue
		}
		// Each replacement counts one more failure (counted or ignored)
		// than the pod it replaces; creation timestamps only have seconds.
		if q := newest[ix]; q == nil || generation(p) > generation(q) ||
			generation(p) == generation(q) && p.CreationTimestamp.After(q.CreationTimestamp.Time) {
			newest[ix] = p
		}
	}
	failedIdx := indexSet{}
	if job.Status.FailedIndexes != nil {
		failedIdx = parseIndexSet(*job.Status.FailedIndexes, completions(job))
	}
	o.byIndex = make(map[int]indexState, len(newest))
	for ix, p := range newest {
		s := indexState{failures: indexFailureCount(p), ignored: indexIgnoredCount(p)}
		if isPodFailed(p, job) {
			action, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p)
			if action == batchv1.PodFailurePolicyActionIgnore {
				s.ignored++
			} else {
				s.failures++
			}
			s.failedAt = podFinishTime(p)
			// The index is retried: keep the finalizer until the
			// replacement exists.
			retried := action != batchv1.PodFailurePolicyActionFailIndex &&
				action != batchv1.PodFailurePolicyActionFailJob &&
				s.failures <= *job.Spec.BackoffLimitPerIndex && !failedIdx.Has(ix)
			if retried && hasTrackingFinalizer(p) {
				o.delayed[p.UID] = struct{}{}
			}
		}
		o.byIndex[ix] = s
	}
}

// managePods creates and deletes pods so the right number runs; it returns
// when to look again (backoff).
func (r *reconciler) managePods(ctx context.Context, job *batchv1.Job, o *observed, t *tracking, now time.Time) (time.Duration, error) {
	parallelism := int32(1)
	if job.Spec.Parallelism != nil {
		parallelism = *job.Spec.Parallelism
	}
	// With podReplacementPolicy Failed, terminating pods are replaced only
	// once they are gone.
	var extra int32
	if onlyReplaceFailed(job) {
		extra = int32(len(o.terminating))
	}

	var toDelete []corev1.Pod
	var toCreate []int // indexes (Indexed) or -1 per NonIndexed pod
	var wait time.Duration
	if isIndexed(job) {
		seen := map[int]bool{}
		var kept []corev1.Pod
		for _, p := range sortOldestFirst(o.active) {
			i, ok := podIndex(&p)
			if !ok || i >= completions(job) || t.completed.Has(i) || t.failedIdx.Has(i) || seen[i] {
				toDelete = append(toDelete, p)
				continue
			}
			seen[i] = true
			kept = append(kept, p)
		}
		if n := int32(len(kept)); n > parallelism {
			// Drop the highest indexes beyond parallelism.
			slices.SortFunc(kept, func(a, b corev1.Pod) int {
				ia, _ := podIndex(&a)
				ib, _ := podIndex(&b)
				return cmp.Compare(ib, ia)
			})
			toDelete = append(toDelete, kept[:n-parallelism]...)
			kept = kept[n-parallelism:]
		}
		busy := int32(len(kept)) + extra
		for i := 0; i < completions(job) && busy+int32(len(toCreate)) < parallelism; i++ {
			if t.completed.Has(i) || t.failedIdx.Has(i) || seen[i] || indexTerminating(o.terminating, i, job) {
				continue
			}
			if s, ok := o.byIndex[i]; ok && !s.failedAt.IsZero() && s.failures > 0 {
				// Per-index backoff after the index's own failures.
				ready := s.failedAt.Add(backoffDelay(int(s.failures), r.backoffBase, r.backoffMax))
				if left := ready.Sub(now); left > 0 {
					wait = minPositive(wait, left)
					continue
				}
			}
			toCreate = append(toCreate, i)
		}
	} else {
		// t is recorded already: the new successes are in the uncounted UIDs.
		succeeded := job.Status.Succeeded
		if u := job.Status.UncountedTerminatedPods; u != nil {
			succeeded += int32(len(u.Succeeded))
		}
		want := parallelism
		if job.Spec.Completions != nil {
			want = min(parallelism, max(0, *job.Spec.Completions-succeeded))
		} else if succeeded > 0 {
			want = 0
		}
		busy := int32(len(o.active)) + extra
		switch {
		case int32(len(o.active)) > want:
			toDelete = sortForDeletion(o.active)[:int32(len(o.active))-want]
		case busy < want:
			for range want - busy {
				toCreate = append(toCreate, -1)
			}
		}
	}

	deleted, deletedReady, err := r.deletePods(ctx, job, toDelete, true)
	if err != nil {
		return 0, err
	}
	job.Status.Active = int32(len(o.active) - len(toDelete))
	// Ready counts the ready pods among the active ones that remain; the
	// pods just deleted are terminating, as Kubernetes counts them in the
	// same sync.
	*job.Status.Ready -= deletedReady
	*job.Status.Terminating += deleted
	if len(toCreate) == 0 {
		return wait, nil
	}
	if job.Spec.BackoffLimitPerIndex == nil {
		if w := r.backoffRemaining(o, now); w > 0 {
			return w, nil
		}
	}
	for _, i := range toCreate {
		pod, err := newPod(job, i, o.byIndex[i])
		if err != nil {
			return 0, err
		}
		if err := r.createPod(ctx, pod); err != nil {
			r.recorder.Event(ctx, job, record.Warning, "FailedCreate", fmt.Sprintf("Error creating: %v", err))
			return 0, fmt.Errorf("create pod for job %s/%s: %w", job.Namespace, job.Name, err)
		}
		job.Status.Active++
		r.recorder.Event(ctx, job, record.Normal, "SuccessfulCreate", "Created pod: "+pod.Name)
	}
	return wait, nil
}

// deletePods deletes pods and records an event for each; it returns how many
// it deleted and how many of those were ready (they leave status.active and
// status.ready, as in Kubernetes). With release, the tracking finalizer is
// removed first, so the pod is not counted as failed (the controller deletes
// it on purpose: excess or suspended).
func (r *reconciler) deletePods(ctx context.Context, job *batchv1.Job, pods []corev1.Pod, release bool) (deleted, deletedReady int32, _ error) {
	for i := range pods {
		p := &pods[i]
		if release && hasTrackingFinalizer(p) {
			if err := r.removeFinalizer(ctx, p); err != nil {
				return deleted, deletedReady, fmt.Errorf("remove finalizer %s from pod %s/%s: %w", batchv1.JobTrackingFinalizer, p.Namespace, p.Name, err)
			}
		}
		if err := r.deletePod(ctx, p); err != nil {
			r.recorder.Event(ctx, job, record.Warning, "FailedDelete", fmt.Sprintf("Error deleting: %v", err))
			return deleted, deletedReady, fmt.Errorf("delete pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		deleted++
		if isPodReady(p) {
			deletedReady++
		}
		r.recorder.Event(ctx, job, record.Normal, "SuccessfulDelete", "Deleted pod: "+p.Name)
	}
	return deleted, deletedReady, nil
}

// newPod builds a pod of job; index is the completion index, or -1, and prev
// the failure record of that index (backoffLimitPerIndex).
func newPod(job *batchv1.Job, index int, prev indexState) (*corev1.Pod, error) {
	spec, err := deepCopy(job.Spec.Template.Spec)
	if err != nil {
		return nil, fmt.Errorf("copy pod template of job %s/%s: %w", job.Namespace, job.Name, err)
	}
	pod := &corev1.Pod{
		ObjectMeta: api.ObjectMeta{
			GenerateName: job.Name + "-",
			Namespace:    job.Namespace,
			Labels:       maps.Clone(job.Spec.Template.Labels),
			Annotations:  maps.Clone(job.Spec.Template.Annotations),
			Finalizers:   append(slices.Clone(job.Spec.Template.Finalizers), batchv1.JobTrackingFinalizer),
			OwnerReferences: []api.OwnerReference{{
				APIVersion: batchv1.GroupVersion.String(), Kind: "Job", Name: job.Name, UID: job.UID,
				Controller: api.Ptr(true), BlockOwnerDeletion: api.Ptr(true),
			}},
		},
		Spec: spec,
	}
	if index >= 0 {
		idx := strconv.Itoa(index)
		pod.GenerateName = fmt.Sprintf("%s-%d-", job.Name, index)
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Labels[batchv1.JobCompletionIndexAnnotation] = idx
		pod.Annotations[batchv1.JobCompletionIndexAnnotation] = idx
		// As Kubernetes: an indexed pod's host name is JOB-INDEX (with the
		// template's subdomain, a stable DNS name per index).
		pod.Spec.Hostname = fmt.Sprintf("%s-%d", job.Name, index)
		if job.Spec.BackoffLimitPerIndex != nil {
			pod.Annotations[batchv1.JobIndexFailureCountAnnotation] = strconv.Itoa(int(prev.failures))
			if prev.ignored > 0 {
				pod.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(int(prev.ignored))
			}
		}
		for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for i := range cs {
				cs[i].Env = append(cs[i].Env, corev1.EnvVar{Name: completionIndexEnv, Value: idx})
			}
		}
	}
	return pod, nil
}

// sortForDeletion orders pods so the cheapest to lose come first: unscheduled,
// then not ready, then newest.
func sortForDeletion(pods []corev1.Pod) []corev1.Pod {
	out := slices.Clone(pods)
	rank := func(p *corev1.Pod) int {
		switch {
		case p.Spec.NodeName == "":
			return 0
		case !isPodReady(p):
			return 1
		default:
			return 2
		}
	}
	slices.SortStableFunc(out, func(a, b corev1.Pod) int {
		if c := cmp.Compare(rank(&a), rank(&b)); c != 0 {
			return c
		}
		return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
	})
	return out
}

// sortOldestFirst orders pods by creation, oldest first.
func sortOldestFirst(pods []corev1.Pod) []corev1.Pod {
	out := slices.Clone(pods)
	slices.SortStableFunc(out, func(a, b corev1.Pod) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	return out
}

func indexTerminating(pods []corev1.Pod, i int, job *batchv1.Job) bool {
	if job.Spec.PodReplacementPolicy == nil || *job.Spec.PodReplacementPolicy != batchv1.Failed {
		return false
	}
	for _, p := range pods {
		if j, ok := podIndex(&p); ok && j == i {
			return true
		}
	}
	return false
}

func podIndex(p *corev1.Pod) (int, bool) {
	v, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		v, ok = p.Labels[batchv1.JobCompletionIndexAnnotation]
	}
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return 0, false
	}
	return i, true
}

// indexFailureCount is the pod's batch.kubernetes.io/job-index-failure-count
// annotation: the failures of its index before it.
func indexFailureCount(p *corev1.Pod) int32 {
	return annotationInt32(p, batchv1.JobIndexFailureCountAnnotation)
}

// indexIgnoredCount is the pod's
// batch.kubernetes.io/job-index-ignored-failure-count annotation.
func indexIgnoredCount(p *corev1.Pod) int32 {
	return annotationInt32(p, batchv1.JobIndexIgnoredFailureCountAnnotation)
}

// generation orders the pods of one index: the failures before them.
func generation(p *corev1.Pod) int32 { return indexFailureCount(p) + indexIgnoredCount(p) }

func annotationInt32(p *corev1.Pod, key string) int32 {
	n, err := strconv.ParseInt(p.Annotations[key], 10, 32)
	if err != nil || n < 0 {
		return 0
	}
	return int32(n)
}

func isPodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podFinishTime is when a terminated pod finished: its containers' latest
// finishedAt, else its Ready condition's last transition, else its creation.
func podFinishTime(p *corev1.Pod) time.Time {
	var t time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if term := cs.State.Terminated; term != nil && term.FinishedAt.After(t) {
			t = term.FinishedAt.Time
		}
	}
	if !t.IsZero() {
		return t
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return p.CreationTimestamp.Time
}

func isIndexed(job *batchv1.Job) bool {
	return job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion
}

func completions(job *batchv1.Job) int {
	if job.Spec.Completions == nil {
		return 0
	}
	return int(*job.Spec.Completions)
}

func isSuspended(job *batchv1.Job) bool { return job.Spec.Suspend != nil && *job.Spec.Suspend }

func deepCopy[T any](v T) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(b, &out)
	return out, err
}
