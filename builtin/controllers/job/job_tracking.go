package job

import (
	"context"
	"fmt"
	"slices"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// Pod tracking with the batch.kubernetes.io/job-tracking finalizer, as
// Kubernetes does it:
//
//  1. every pod the controller creates carries the finalizer, so a finished
//     pod cannot disappear before it was counted;
//  2. a finished pod still carrying the finalizer is first recorded in
//     status.uncountedTerminatedPods (Indexed successes go straight to
//     completedIndexes, which is idempotent), and that status is written;
//  3. only then the finalizer is removed from the pod;
//  4. a UID in uncountedTerminatedPods whose pod no longer carries the
//     finalizer (or is gone) is moved into status.succeeded / status.failed.
//
// A pod is thus added to the counters exactly once whatever crashes or
// deletions happen between the steps: step 2 never adds a UID twice, step 4
// only moves UIDs recorded in step 2, and a pod without the finalizer is never
// recorded again.

// uidSet is a set of pod UIDs.
type uidSet map[string]struct{}

func newUIDSet(uids ...string) uidSet {
	s := make(uidSet, len(uids))
	for _, u := range uids {
		s[u] = struct{}{}
	}
	return s
}

func (s uidSet) Has(u string) bool { _, ok := s[u]; return ok }

// tracking is what the finished pods that still carry the finalizer add to
// the Job's status in this round.
type tracking struct {
	newSucceeded []string // UIDs of succeeded pods (NonIndexed)
	newFailed    []string // UIDs of failed pods counted against the Job
	completed    indexSet // completed indexes, previous ones included (Indexed)
	failedIdx    indexSet // failed indexes, previous ones included (backoffLimitPerIndex)
	// removeFinalizer are the pods whose finalizer goes once the status
	// recording them is written.
	removeFinalizer []*corev1.Pod
	// failJobMessage is set when a newly failed pod matched a FailJob rule.
	failJobMessage string
}

func hasTrackingFinalizer(p *corev1.Pod) bool {
	return slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer)
}

// onlyReplaceFailed reports whether podReplacementPolicy is Failed.
func onlyReplaceFailed(job *batchv1.Job) bool {
	return job.Spec.PodReplacementPolicy != nil && *job.Spec.PodReplacementPolicy == batchv1.Failed
}

// isPodFailed reports whether pod counts as failed: phase Failed or, unless
// podReplacementPolicy is Failed, being deleted without having succeeded
// (orphaned pods never reach Failed). A pod being deleted that no node runs
// never reaches a terminal phase either (Kubernetes' pod GC marks it Failed),
// so it counts as failed with either policy.
func isPodFailed(p *corev1.Pod, job *batchv1.Job) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	if p.DeletionTimestamp == nil || p.Status.Phase == corev1.PodSucceeded {
		return false
	}
	return !onlyReplaceFailed(job) || p.Spec.NodeName == ""
}

// uncountedSets returns the UIDs recorded in status.uncountedTerminatedPods.
func uncountedSets(st *batchv1.JobStatus) (succeeded, failed uidSet) {
	if st.UncountedTerminatedPods == nil {
		return uidSet{}, uidSet{}
	}
	return newUIDSet(st.UncountedTerminatedPods.Succeeded...), newUIDSet(st.UncountedTerminatedPods.Failed...)
}

// track decides, for the pods carrying the finalizer, which are newly
// finished and may lose the finalizer. finishing is the Job's FailureTarget or
// SuccessCriteriaMet condition, or nil; delayed are failed pods whose
// finalizer stays until their index got a replacement (backoffLimitPerIndex).
func track(job *batchv1.Job, pods []corev1.Pod, finishing *batchv1.JobCondition, delayed uidSet) *tracking {
	t := &tracking{}
	uncSucceeded, uncFailed := uncountedSets(&job.Status)
	indexed := isIndexed(job)
	if indexed {
		t.completed = parseIndexSet(job.Status.CompletedIndexes, completions(job))
		t.failedIdx = indexSet{}
		if job.Status.FailedIndexes != nil {
			t.failedIdx = parseIndexSet(*job.Status.FailedIndexes, completions(job))
		}
	}
	failing := finishing != nil && finishing.Type == batchv1.JobFailureTarget
	for i := range pods {
		p := &pods[i]
		if !hasTrackingFinalizer(p) {
			continue
		}
		failed := isPodFailed(p, job)
		succeeded := p.Status.Phase == corev1.PodSucceeded
		if !succeeded && !failed && finishing == nil && job.DeletionTimestamp == nil {
			continue // still running
		}
		if finishing == nil && delayed.Has(p.UID) {
			continue
		}
		t.removeFinalizer = append(t.removeFinalizer, p)
		ix, hasIx := podIndex(p)
		validIx := hasIx && ix < completions(job)
		switch {
		case succeeded && !uncFailed.Has(p.UID):
			if indexed {
				if validIx && !t.failedIdx.Has(ix) {
					t.completed.Add(ix)
				}
			} else if !uncSucceeded.Has(p.UID) {
				t.newSucceeded = append(t.newSucceeded, p.UID)
			}
		case failed || failing:
			if uncFailed.Has(p.UID) || uncSucceeded.Has(p.UID) || indexed && !validIx {
				continue
			}
			action, msg := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p)
			switch action {
			case batchv1.PodFailurePolicyActionIgnore:
				continue
			case batchv1.PodFailurePolicyActionFailJob:
				if t.failJobMessage == "" {
					t.failJobMessage = msg
				}
			case batchv1.PodFailurePolicyActionFailIndex:
				if validIx && job.Spec.BackoffLimitPerIndex != nil {
					t.failedIdx.Add(ix)
				}
			}
			if validIx && job.Spec.BackoffLimitPerIndex != nil &&
				indexFailureCount(p)+1 > *job.Spec.BackoffLimitPerIndex {
				t.failedIdx.Add(ix)
			}
			t.newFailed = append(t.newFailed, p.UID)
		}
	}
	return t
}

// record writes what t adds to the status (uncounted UIDs, completed and
// failed indexes) into st; it reports whether that must be persisted before
// finalizers are removed.
func (t *tracking) record(job *batchv1.Job) bool {
	st := &job.Status
	if st.UncountedTerminatedPods == nil {
		st.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	u := st.UncountedTerminatedPods
	changed := len(t.newSucceeded) > 0 || len(t.newFailed) > 0
	u.Succeeded = append(u.Succeeded, t.newSucceeded...)
	u.Failed = append(u.Failed, t.newFailed...)
	if isIndexed(job) {
		if s := t.completed.String(); s != st.CompletedIndexes {
			st.CompletedIndexes, changed = s, true
		}
		st.Succeeded = max(st.Succeeded, int32(t.completed.Len()))
		if job.Spec.BackoffLimitPerIndex != nil {
			s := t.failedIdx.String()
			if st.FailedIndexes == nil || *st.FailedIndexes != s {
				st.FailedIndexes, changed = api.Ptr(s), true
			}
		}
	}
	return changed
}

// removeFinalizers removes the tracking finalizer from pods; it returns the
// UIDs of the pods that no longer carry it (removed or gone).
func (r *reconciler) removeFinalizers(ctx context.Context, pods []*corev1.Pod) (uidSet, error) {
	done := uidSet{}
	var errs []error
	for _, p := range pods {
		if err := r.removeFinalizer(ctx, p); err != nil {
			errs = append(errs, fmt.Errorf("remove finalizer %s from pod %s/%s: %w", batchv1.JobTrackingFinalizer, p.Namespace, p.Name, err))
			continue
		}
		done[p.UID] = struct{}{}
	}
	if len(errs) > 0 {
		return done, errs[0]
	}
	return done, nil
}

// countUncounted moves the UIDs of status.uncountedTerminatedPods whose pods
// no longer carry the finalizer into succeeded and failed. pods is the Job's
// pods as listed; removed are the pods whose finalizer was just removed.
func countUncounted(job *batchv1.Job, pods []corev1.Pod, removed uidSet) {
	withFinalizer := uidSet{}
	for i := range pods {
		if hasTrackingFinalizer(&pods[i]) && !removed.Has(pods[i].UID) {
			withFinalizer[pods[i].UID] = struct{}{}
		}
	}
	st := &job.Status
	if st.UncountedTerminatedPods == nil {
		st.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	u := st.UncountedTerminatedPods
	keep := func(uids []string, counter *int32) []string {
		var out []string
		for _, uid := range uids {
			if withFinalizer.Has(uid) {
				out = append(out, uid)
				continue
			}
			*counter++
		}
		return out
	}
	u.Succeeded = keep(u.Succeeded, &st.Succeeded)
	u.Failed = keep(u.Failed, &st.Failed)
}

// uncountedEmpty reports whether no finished pod waits to be counted.
func uncountedEmpty(st *batchv1.JobStatus) bool {
	u := st.UncountedTerminatedPods
	return u == nil || len(u.Succeeded) == 0 && len(u.Failed) == 0
}
