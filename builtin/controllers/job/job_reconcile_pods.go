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
	succeeded   int32    // succeeded pods (NonIndexed)
	completed   indexSet // completed indexes (Indexed), with the Job's previous ones
	failed      int32    // failed pods counted against backoffLimit
	// consecutiveFailures are counted failures after the last success, and
	// lastFailure the latest of their finish times (for the backoff).
	consecutiveFailures int
	lastFailure         time.Time
	// failJobMessage is set when a failed pod matched a FailJob rule.
	failJobMessage string
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
	o := &observed{}
	if isIndexed(job) {
		o.completed = parseIndexSet(job.Status.CompletedIndexes, completions(job))
	}
	var lastSuccess time.Time
	type failure struct{ at time.Time }
	var failures []failure
	for _, p := range pods {
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			o.succeeded++
			if isIndexed(job) {
				if i, ok := podIndex(&p); ok && i < completions(job) {
					o.completed.Add(i)
				}
			}
			if t := podFinishTime(&p); t.After(lastSuccess) {
				lastSuccess = t
			}
		case p.Status.Phase == corev1.PodFailed:
			action, msg := matchPodFailurePolicy(job.Spec.PodFailurePolicy, &p)
			switch action {
			case batchv1.PodFailurePolicyActionIgnore:
				continue
			case batchv1.PodFailurePolicyActionFailJob:
				if o.failJobMessage == "" {
					o.failJobMessage = msg
				}
			}
			o.failed++
			failures = append(failures, failure{podFinishTime(&p)})
		case p.DeletionTimestamp != nil:
			o.terminating = append(o.terminating, p)
		default:
			o.active = append(o.active, p)
			if isPodReady(&p) {
				o.ready++
			}
		}
	}
	for _, f := range failures {
		if f.at.After(lastSuccess) || f.at.Equal(lastSuccess) && lastSuccess.IsZero() {
			o.consecutiveFailures++
			if f.at.After(o.lastFailure) {
				o.lastFailure = f.at
			}
		}
	}
	return o
}

// managePods creates and deletes pods so the right number runs; it returns
// when to look again (backoff).
func (r *reconciler) managePods(ctx context.Context, job *batchv1.Job, o *observed, now time.Time) (time.Duration, error) {
	parallelism := int32(1)
	if job.Spec.Parallelism != nil {
		parallelism = *job.Spec.Parallelism
	}
	// With podReplacementPolicy Failed, terminating pods are replaced only
	// once they are gone.
	var extra int32
	if job.Spec.PodReplacementPolicy != nil && *job.Spec.PodReplacementPolicy == batchv1.Failed {
		extra = int32(len(o.terminating))
	}

	var toDelete []corev1.Pod
	var toCreate []int // indexes (Indexed) or -1 per NonIndexed pod
	if isIndexed(job) {
		seen := map[int]bool{}
		var kept []corev1.Pod
		for _, p := range sortOldestFirst(o.active) {
			i, ok := podIndex(&p)
			if !ok || i >= completions(job) || o.completed.Has(i) || seen[i] {
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
			if !o.completed.Has(i) && !seen[i] && !indexTerminating(o.terminating, i, job) {
				toCreate = append(toCreate, i)
			}
		}
	} else {
		want := parallelism
		if job.Spec.Completions != nil {
			want = min(parallelism, max(0, *job.Spec.Completions-max(job.Status.Succeeded, o.succeeded)))
		} else if o.succeeded > 0 || job.Status.Succeeded > 0 {
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

	if _, err := r.deletePods(ctx, job, toDelete); err != nil {
		return 0, err
	}
	job.Status.Active = int32(len(o.active) - len(toDelete))
	if len(toCreate) == 0 {
		return 0, nil
	}
	if wait := r.backoffRemaining(o, now); wait > 0 {
		return wait, nil
	}
	for _, i := range toCreate {
		pod, err := newPod(job, i)
		if err != nil {
			return 0, err
		}
		if err := r.createPod(ctx, pod); err != nil {
			r.event(ctx, job, record.Warning, "FailedCreate", fmt.Sprintf("Error creating: %v", err))
			return 0, fmt.Errorf("create pod for job %s/%s: %w", job.Namespace, job.Name, err)
		}
		job.Status.Active++
		r.event(ctx, job, record.Normal, "SuccessfulCreate", "Created pod: "+pod.Name)
	}
	return 0, nil
}

// deletePods deletes pods and records an event for each; it returns how many
// it deleted.
func (r *reconciler) deletePods(ctx context.Context, job *batchv1.Job, pods []corev1.Pod) (int32, error) {
	var n int32
	for i := range pods {
		if err := r.deletePod(ctx, &pods[i]); err != nil {
			r.event(ctx, job, record.Warning, "FailedDelete", fmt.Sprintf("Error deleting pod %s: %v", pods[i].Name, err))
			return n, fmt.Errorf("delete pod %s/%s: %w", pods[i].Namespace, pods[i].Name, err)
		}
		n++
		r.event(ctx, job, record.Normal, "SuccessfulDelete", "Deleted pod: "+pods[i].Name)
	}
	return n, nil
}

// newPod builds a pod of job; index is the completion index, or -1.
func newPod(job *batchv1.Job, index int) (*corev1.Pod, error) {
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
			Finalizers:   slices.Clone(job.Spec.Template.Finalizers),
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
