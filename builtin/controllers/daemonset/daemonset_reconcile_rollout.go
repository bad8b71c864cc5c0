package daemonset

import (
	"math"
	"strconv"
	"strings"
	"time"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// rollingUpdate adds to p the replacements of old pods that the
// RollingUpdate strategy allows now, and returns when a pod will become
// available (0 for never).
func (r *reconciler) rollingUpdate(ds *appsv1.DaemonSet, states []*nodeState, hash string, now time.Time, p *plan) time.Duration {
	if ds.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType {
		return 0
	}
	desired := 0
	for _, st := range states {
		if st.shouldRun {
			desired++
		}
	}
	maxSurge, maxUnavailable := rollingLimits(ds, desired)
	var requeue time.Duration
	avail := func(pod *corev1.Pod) bool {
		ok, wait := isAvailable(pod, ds.Spec.MinReadySeconds, now)
		if wait > 0 && (requeue == 0 || wait < requeue) {
			requeue = wait
		}
		return ok
	}

	if maxSurge == 0 {
		unavailable := 0
		var candidates []corev1.Pod
		for _, st := range states {
			if !st.shouldRun || !st.shouldContinue {
				continue
			}
			if len(st.pods) == 0 {
				unavailable++
				continue
			}
			pod := st.pods[0]
			switch {
			case !avail(&pod):
				unavailable++
				if !updated(ds, &pod, hash) {
					p.delete = append(p.delete, pod) // not serving anyway
				}
			case !updated(ds, &pod, hash):
				candidates = append(candidates, pod)
			}
		}
		for _, pod := range candidates {
			if unavailable >= maxUnavailable {
				break
			}
			p.delete = append(p.delete, pod)
			unavailable++
		}
		return requeue
	}

	surge := 0
	var candidates []string
	for _, st := range states {
		if !st.shouldRun || !st.shouldContinue || len(st.pods) == 0 {
			continue
		}
		var oldPod, newPod *corev1.Pod
		for i := range st.pods {
			if updated(ds, &st.pods[i], hash) {
				newPod = &st.pods[i]
			} else if oldPod == nil {
				oldPod = &st.pods[i]
			}
		}
		switch {
		case oldPod == nil:
		case newPod == nil && !avail(oldPod):
			// The old pod does not serve: replace it at once.
			p.create = append(p.create, st.node.Name)
			p.delete = append(p.delete, *oldPod)
		case newPod == nil:
			candidates = append(candidates, st.node.Name)
		case avail(newPod):
			p.delete = append(p.delete, *oldPod)
		default:
			surge++
		}
	}
	for _, node := range candidates {
		if surge >= maxSurge {
			break
		}
		p.create = append(p.create, node)
		surge++
	}
	return requeue
}

// rollingLimits resolves maxSurge and maxUnavailable against desired
// (percentages round up); both zero means maxUnavailable 1.
func rollingLimits(ds *appsv1.DaemonSet, desired int) (maxSurge, maxUnavailable int) {
	maxUnavailable = 1
	if ru := ds.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if ru.MaxSurge != nil {
			maxSurge = scaled(*ru.MaxSurge, desired)
		}
		if ru.MaxUnavailable != nil {
			maxUnavailable = scaled(*ru.MaxUnavailable, desired)
		}
	}
	if maxSurge == 0 && maxUnavailable == 0 {
		maxUnavailable = 1
	}
	return maxSurge, maxUnavailable
}

func scaled(v api.IntOrString, total int) int {
	if v.Type == api.Int {
		return int(v.IntVal)
	}
	pct, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if err != nil {
		return 0
	}
	return int(math.Ceil(float64(pct) * float64(total) / 100))
}

// isAvailable reports whether pod is ready for minReadySeconds, and otherwise
// how long until it would be (0 when not ready at all).
func isAvailable(pod *corev1.Pod, minReadySeconds int32, now time.Time) (bool, time.Duration) {
	for _, c := range pod.Status.Conditions {
		if c.Type != corev1.PodReady {
			continue
		}
		if c.Status != corev1.ConditionTrue {
			return false, 0
		}
		if minReadySeconds == 0 {
			return true, 0
		}
		at := c.LastTransitionTime.Add(time.Duration(minReadySeconds) * time.Second)
		if !now.Before(at) {
			return true, 0
		}
		return false, at.Sub(now)
	}
	return false, 0
}

func isReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// computeStatus counts nodes like Kubernetes: the oldest pod of a node decides
// whether it is ready, available and updated.
func computeStatus(ds *appsv1.DaemonSet, states []*nodeState, hash string, now time.Time) appsv1.DaemonSetStatus {
	var st appsv1.DaemonSetStatus
	for _, n := range states {
		if !n.shouldRun {
			if len(n.pods) > 0 {
				st.NumberMisscheduled++
			}
			continue
		}
		st.DesiredNumberScheduled++
		if len(n.pods) == 0 {
			continue
		}
		st.CurrentNumberScheduled++
		pod := &n.pods[0]
		if isReady(pod) {
			st.NumberReady++
			if ok, _ := isAvailable(pod, ds.Spec.MinReadySeconds, now); ok {
				st.NumberAvailable++
			}
		}
		if updated(ds, pod, hash) {
			st.UpdatedNumberScheduled++
		}
	}
	st.NumberUnavailable = st.DesiredNumberScheduled - st.NumberAvailable
	st.ObservedGeneration = ds.Generation
	return st
}
