package job

import (
	"fmt"
	"slices"
	"time"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// matchPodFailurePolicy returns the action of the first rule matching the
// failed pod ("" when none matches: the failure counts) and, for FailJob, the
// message for the Job's condition.
func matchPodFailurePolicy(pfp *batchv1.PodFailurePolicy, pod *corev1.Pod) (batchv1.PodFailurePolicyAction, string) {
	if pfp == nil {
		return "", ""
	}
	for i, rule := range pfp.Rules {
		if req := rule.OnExitCodes; req != nil {
			if c, code, ok := matchExitCodes(req, pod); ok {
				return rule.Action, fmt.Sprintf("Container %s for pod %s/%s failed with exit code %d matching %s rule at index %d",
					c, pod.Namespace, pod.Name, code, rule.Action, i)
			}
			continue
		}
		for _, pat := range rule.OnPodConditions {
			status := pat.Status
			if status == "" {
				status = corev1.ConditionTrue
			}
			if slices.ContainsFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool {
				return c.Type == pat.Type && c.Status == status
			}) {
				return rule.Action, fmt.Sprintf("Pod %s/%s has condition %s matching %s rule at index %d",
					pod.Namespace, pod.Name, pat.Type, rule.Action, i)
			}
		}
	}
	return "", ""
}

// matchExitCodes finds a terminated container (init containers first) whose
// non-zero exit code satisfies req; exit code 0 never matches, as in
// Kubernetes.
func matchExitCodes(req *batchv1.PodFailurePolicyOnExitCodesRequirement, pod *corev1.Pod) (string, int32, bool) {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range list {
			if req.ContainerName != nil && *req.ContainerName != cs.Name {
				continue
			}
			term := cs.State.Terminated
			if term == nil || term.ExitCode == 0 {
				continue
			}
			in := slices.Contains(req.Values, term.ExitCode)
			if req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && in ||
				req.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in {
				return cs.Name, term.ExitCode, true
			}
		}
	}
	return "", 0, false
}

// backoffDelay is the wait before creating pods after n consecutive
// failures: base doubling per failure, capped at maxDelay.
func backoffDelay(n int, base, maxDelay time.Duration) time.Duration {
	if n <= 0 {
		return 0
	}
	d := base
	for i := 1; i < n && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}

// backoffRemaining is how long pod creation must still wait.
func (r *reconciler) backoffRemaining(o *observed, now time.Time) time.Duration {
	if o.consecutiveFailures == 0 {
		return 0
	}
	ready := o.lastFailure.Add(backoffDelay(o.consecutiveFailures, r.backoffBase, r.backoffMax))
	return max(0, ready.Sub(now))
}
