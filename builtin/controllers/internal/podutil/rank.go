package podutil

import (
	"cmp"
	"slices"
	"strconv"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// SortForDeletion orders pods so that the ones to delete first come first,
// with Kubernetes' preferences (pkg/controller ActivePods ordering):
//
//  1. unscheduled before scheduled;
//  2. Pending before Unknown before Running;
//  3. not ready before ready;
//  4. lower pod-deletion-cost first;
//  5. of two ready pods, the one ready for less time first;
//  6. more container restarts first;
//  7. newer pods first.
func SortForDeletion(pods []*corev1.Pod) {
	slices.SortStableFunc(pods, CompareForDeletion)
}

var phaseRank = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

// CompareForDeletion returns a negative number when a should be deleted
// before b (see SortForDeletion).
func CompareForDeletion(a, b *corev1.Pod) int {
	if c := cmp.Compare(boolRank(a.Spec.NodeName != ""), boolRank(b.Spec.NodeName != "")); c != 0 {
		return c
	}
	if c := cmp.Compare(rankPhase(a.Status.Phase), rankPhase(b.Status.Phase)); c != 0 {
		return c
	}
	ra, rb := IsReady(a), IsReady(b)
	if c := cmp.Compare(boolRank(ra), boolRank(rb)); c != 0 {
		return c
	}
	if c := cmp.Compare(deletionCost(a), deletionCost(b)); c != 0 {
		return c
	}
	if ra && rb {
		ta, tb := ReadyCondition(a).LastTransitionTime.Time, ReadyCondition(b).LastTransitionTime.Time
		if !ta.Equal(tb) {
			return tb.Compare(ta) // later ready time first
		}
	}
	if c := cmp.Compare(restarts(b), restarts(a)); c != 0 {
		return c
	}
	ca, cb := a.CreationTimestamp.Time, b.CreationTimestamp.Time
	if !ca.Equal(cb) {
		return cb.Compare(ca) // newer first
	}
	return cmp.Compare(a.Name, b.Name)
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func rankPhase(p corev1.PodPhase) int {
	if r, ok := phaseRank[p]; ok {
		return r
	}
	return 0 // an empty phase is as good as Pending
}

func deletionCost(p *corev1.Pod) int64 {
	v, ok := p.Annotations[DeletionCostAnnotation]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0
	}
	return n
}

func restarts(p *corev1.Pod) int32 {
	var m int32
	for _, cs := range p.Status.ContainerStatuses {
		m = max(m, cs.RestartCount)
	}
	return m
}
