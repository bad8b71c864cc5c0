package defaultpreemption

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	policyv1 "github.com/converge-dev/converge/builtin/api/policy/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/api/labels"
)

// candidate is a node where preempting victims (highest priority first) makes
// the pod fit.
type candidate struct {
	node             string
	victims          []*corev1.Pod
	numPDBViolations int
}

// podPriority is spec.priority, 0 when unset.
func podPriority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// podStartTime is status.startTime, or now for pods not started yet.
func podStartTime(p *corev1.Pod, now time.Time) time.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return now
}

// moreImportant orders pods by priority, then by start time (earlier first).
func moreImportant(a, b *corev1.Pod, now time.Time) bool {
	pa, pb := podPriority(a), podPriority(b)
	if pa != pb {
		return pa > pb
	}
	return podStartTime(a, now).Before(podStartTime(b, now))
}

func sortByImportance(pods []*plugin.PodInfo, now time.Time) {
	slices.SortStableFunc(pods, func(a, b *plugin.PodInfo) int {
		switch {
		case moreImportant(a.Pod, b.Pod, now):
			return -1
		case moreImportant(b.Pod, a.Pod, now):
			return 1
		}
		return 0
	})
}

// dryRun evaluates the potential nodes from offset (wrapping) until it has
// want candidates without budget violations, and returns those first, then the
// violating ones. statuses receives the status of every node that is no
// candidate.
func (pl *DefaultPreemption) dryRun(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, potential []*plugin.NodeInfo,
	pdbs []*policyv1.PodDisruptionBudget, offset, want int, statuses *plugin.NodeToStatus) ([]candidate, error) {
	var nonViolating, violating []candidate
	for i := range potential {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ni := potential[(offset+i)%len(potential)].Snapshot()
		name := ni.Node().Name
		victims, numViolations, s := selectVictimsOnNode(ctx, pl.h, state.Clone(), pod, ni, pdbs)
		if s.IsSuccess() && len(victims) == 0 {
			s = plugin.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", name))
		}
		if !s.IsSuccess() {
			if s.Code() == plugin.Error {
				return nil, s.AsError()
			}
			statuses.Set(name, s)
			continue
		}
		c := candidate{node: name, victims: victims, numPDBViolations: numViolations}
		if numViolations == 0 {
			nonViolating = append(nonViolating, c)
		} else {
			violating = append(violating, c)
		}
		if len(nonViolating) >= want {
			break
		}
	}
	return append(nonViolating, violating...), nil
}

// runner is what victim selection runs: the profile's filters and the
// PreFilter extensions.
type runner interface {
	RunFilterPluginsWithNominatedPods(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, nodeInfo *plugin.NodeInfo) *plugin.Status
	RunPreFilterExtensionAddPod(ctx context.Context, state *plugin.CycleState, podToSchedule *corev1.Pod, podInfoToAdd *plugin.PodInfo, nodeInfo *plugin.NodeInfo) *plugin.Status
	RunPreFilterExtensionRemovePod(ctx context.Context, state *plugin.CycleState, podToSchedule *corev1.Pod, podInfoToRemove *plugin.PodInfo, nodeInfo *plugin.NodeInfo) *plugin.Status
}

// selectVictimsOnNode finds the fewest, least important pods to remove from
// nodeInfo (a private copy, changed in place, with state a private clone) so
// that pod fits: all lower-priority pods are removed; if pod then fits, they
// are reprieved from the most important down, budget-violating ones first, and
// kept as victims when pod stops fitting. It returns the victims (most
// important first) and how many violate a budget.
func selectVictimsOnNode(ctx context.Context, r runner, state *plugin.CycleState, pod *corev1.Pod, nodeInfo *plugin.NodeInfo,
	pdbs []*policyv1.PodDisruptionBudget) ([]*corev1.Pod, int, *plugin.Status) {
	remove := func(pi *plugin.PodInfo) error {
		if err := nodeInfo.RemovePod(pi.Pod); err != nil {
			return err
		}
		return r.RunPreFilterExtensionRemovePod(ctx, state, pod, pi, nodeInfo).AsError()
	}
	add := func(pi *plugin.PodInfo) error {
		nodeInfo.AddPodInfo(pi)
		return r.RunPreFilterExtensionAddPod(ctx, state, pod, pi, nodeInfo).AsError()
	}
	prio := podPriority(pod)
	var potential []*plugin.PodInfo
	for _, pi := range slices.Clone(nodeInfo.Pods) {
		if podPriority(pi.Pod) < prio {
			potential = append(potential, pi)
			if err := remove(pi); err != nil {
				return nil, 0, plugin.AsStatus(err)
			}
		}
	}
	if len(potential) == 0 {
		return nil, 0, plugin.NewStatus(plugin.UnschedulableAndUnresolvable, MsgNoVictims)
	}
	// If the pod does not fit without any of them, the node cannot help.
	if s := r.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodeInfo); !s.IsSuccess() {
		return nil, 0, s
	}
	now := time.Now()
	sortByImportance(potential, now)
	violating, nonViolating := filterPodsWithPDBViolation(potential, pdbs)
	var victims []*corev1.Pod
	numViolating := 0
	reprieve := func(pi *plugin.PodInfo) (bool, error) {
		if err := add(pi); err != nil {
			return false, err
		}
		if r.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodeInfo).IsSuccess() {
			return true, nil
		}
		if err := remove(pi); err != nil {
			return false, err
		}
		victims = append(victims, pi.Pod)
		return false, nil
	}
	for _, pi := range violating {
		fits, err := reprieve(pi)
		if err != nil {
			return nil, 0, plugin.AsStatus(err)
		}
		if !fits {
			numViolating++
		}
	}
	for _, pi := range nonViolating {
		if _, err := reprieve(pi); err != nil {
			return nil, 0, plugin.AsStatus(err)
		}
	}
	if len(violating) > 0 && len(nonViolating) > 0 {
		slices.SortStableFunc(victims, func(a, b *corev1.Pod) int {
			switch {
			case moreImportant(a, b, now):
				return -1
			case moreImportant(b, a, now):
				return 1
			}
			return 0
		})
	}
	return victims, numViolating, nil
}

// filterPodsWithPDBViolation splits pods (most important first) into those
// whose eviction would take a matching budget below zero allowed disruptions
// (counting down as it goes) and the others. A budget matches a pod of its
// namespace that its (non-empty) selector selects; pods already in its
// status.disruptedPods do not count against it.
func filterPodsWithPDBViolation(pods []*plugin.PodInfo, pdbs []*policyv1.PodDisruptionBudget) (violating, nonViolating []*plugin.PodInfo) {
	allowed := make([]int32, len(pdbs))
	selectors := make([]labels.Selector, len(pdbs))
	for i, pdb := range pdbs {
		allowed[i] = pdb.Status.DisruptionsAllowed
		sel, err := labels.FromLabelSelector(pdb.Spec.Selector)
		if err != nil {
			sel = labels.Nothing()
		}
		selectors[i] = sel
	}
	for _, pi := range pods {
		p := pi.Pod
		violated := false
		if len(p.Labels) > 0 {
			for i, pdb := range pdbs {
				if pdb.Namespace != p.Namespace || selectors[i].Empty() || !selectors[i].Matches(p.Labels) {
					continue
				}
				if _, disrupted := pdb.Status.DisruptedPods[p.Name]; disrupted {
					continue
				}
				if allowed[i]--; allowed[i] < 0 {
					violated = true
				}
			}
		}
		if violated {
			violating = append(violating, pi)
		} else {
			nonViolating = append(nonViolating, pi)
		}
	}
	return violating, nonViolating
}

// pickOneNodeForPreemption applies Kubernetes' ordered criteria, each keeping
// the best candidates for the next: fewest budget violations, lowest
// highest-victim priority, smallest sum of priorities, fewest victims, latest
// earliest start time among the highest-priority victims; then the first.
func pickOneNodeForPreemption(cs []candidate) candidate {
	now := time.Now()
	scores := []func(c *candidate) int64{
		func(c *candidate) int64 { return -int64(c.numPDBViolations) },
		func(c *candidate) int64 { return -int64(podPriority(c.victims[0])) },
		func(c *candidate) int64 {
			var sum int64
			for _, p := range c.victims {
				// Shift so that negative priorities still add up to a positive sum.
				sum += int64(podPriority(p)) + int64(math.MaxInt32) + 1
			}
			return -sum
		},
		func(c *candidate) int64 { return -int64(len(c.victims)) },
		func(c *candidate) int64 { return earliestStartTime(c.victims, now).UnixNano() },
	}
	left := cs
	for _, score := range scores {
		var best []candidate
		bestScore := int64(math.MinInt64)
		for i := range left {
			switch s := score(&left[i]); cmp.Compare(s, bestScore) {
			case 1:
				bestScore, best = s, []candidate{left[i]}
			case 0:
				best = append(best, left[i])
			}
		}
		if len(best) == 1 {
			return best[0]
		}
		left = best
	}
	return left[0]
}

// earliestStartTime is the earliest start time among the victims of the
// highest priority.
func earliestStartTime(victims []*corev1.Pod, now time.Time) time.Time {
	earliest := podStartTime(victims[0], now)
	top := podPriority(victims[0])
	for _, p := range victims[1:] {
		switch prio := podPriority(p); {
		case prio == top:
			if t := podStartTime(p, now); t.Before(earliest) {
				earliest = t
			}
		case prio > top:
			top, earliest = prio, podStartTime(p, now)
		}
	}
	return earliest
}
