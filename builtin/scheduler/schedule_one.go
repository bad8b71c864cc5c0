package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/metrics"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/builtin/scheduler/profile"
	"github.com/converge-dev/converge/builtin/scheduler/queue"
	"github.com/converge-dev/converge/framework/record"
)

// Minimums of the adaptive percentageOfNodesToScore (kube-scheduler's).
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// Reasons of the PodScheduled=False condition.
const (
	ReasonUnschedulable  = "Unschedulable"
	ReasonSchedulerError = "SchedulerError"
)

// NumFeasibleNodesToFind returns how many feasible nodes a cycle looks for:
// all nodes below 100; otherwise percentage (adaptive 50 − n/125 when 0, at
// least 5 %) of them, at least 100.
func NumFeasibleNodesToFind(percentage int32, numAllNodes int) int {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	if percentage == 0 {
		percentage = int32(50 - numAllNodes/125)
		if percentage < minFeasibleNodesPercentageToFind {
			percentage = minFeasibleNodesPercentageToFind
		}
	}
	n := numAllNodes * int(percentage) / 100
	if n < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return n
}

type scheduleResult struct {
	host             string
	evaluatedNodes   int
	feasibleNodes    int
	nominatingInfo   *plugin.NominatingInfo
	unschedulableErr error
}

// ScheduleOne pops one pod and runs its scheduling cycle; binding continues
// in a goroutine.
func (s *Scheduler) ScheduleOne(ctx context.Context) {
	qpi, err := s.queue.Pop(ctx)
	if err != nil {
		return
	}
	pod := qpi.Pod
	fwk := s.profileFor(pod)
	if fwk == nil || pod.DeletionTimestamp != nil || s.cache.IsAssumedPod(pod) {
		s.queue.Done(qpi.Key())
		return
	}
	s.attempts.Add(1)
	cycle := s.queue.SchedulingCycle()
	start := time.Now()
	state := plugin.NewCycleState()
	state.SetPodInfo(qpi.PodInfo)
	s.cache.UpdateSnapshot(s.snapshot)

	host, err := s.schedulePod(ctx, fwk, state, pod)
	if err != nil {
		var nominating *plugin.NominatingInfo
		var fitErr *plugin.FitError
		if errors.As(err, &fitErr) {
			if fwk.HasPostFilterPlugins() {
				s.metrics.PreemptionAttempt()
				result, st := fwk.RunPostFilterPlugins(ctx, state, pod, fitErr.Diagnosis.NodeToStatus)
				if st.Code() == plugin.Error {
					s.log.Error(st.AsError(), "Status after running PostFilter plugins", "pod", pod.Namespace+"/"+pod.Name)
				} else {
					fitErr.Diagnosis.PostFilterMsg = st.Message()
				}
				if result != nil {
					nominating = result.NominatingInfo
				}
			}
			qpi.UnschedulablePlugins = fitErr.Diagnosis.UnschedulablePlugins
		}
		s.handleFailure(ctx, fwk, qpi, err, nominating, cycle, start)
		return
	}

	// Assume: the pod occupies the node in the cache before it is bound.
	assumed := *pod
	assumed.Spec.NodeName = host
	if err := s.cache.AssumePod(&assumed); err != nil {
		s.handleFailure(ctx, fwk, qpi, err, nil, cycle, start)
		return
	}
	if st := fwk.RunReservePluginsReserve(ctx, state, &assumed, host); !st.IsSuccess() {
		fwk.RunReservePluginsUnreserve(ctx, state, &assumed, host)
		_ = s.cache.ForgetPod(&assumed)
		s.failWithStatus(ctx, fwk, qpi, st, cycle, start)
		return
	}
	if st := fwk.RunPermitPlugins(ctx, state, &assumed, host); !st.IsSuccess() && !st.IsWait() {
		fwk.RunReservePluginsUnreserve(ctx, state, &assumed, host)
		_ = s.cache.ForgetPod(&assumed)
		s.failWithStatus(ctx, fwk, qpi, st, cycle, start)
		return
	}
	// The nomination (if any) is fulfilled by this placement.
	fwk.DeleteNominatedPodIfExists(pod)
	s.bindWG.Add(1)
	go func() {
		defer s.bindWG.Done()
		s.bindingCycle(ctx, fwk, state, qpi, &assumed, cycle, start)
	}()
}

func (s *Scheduler) failWithStatus(ctx context.Context, fwk *profile.Framework, qpi *queue.QueuedPodInfo, st *plugin.Status, cycle int64, start time.Time) {
	if st.IsRejected() {
		qpi.UnschedulablePlugins = map[string]struct{}{st.Plugin(): {}}
		s.handleFailure(ctx, fwk, qpi, &unschedulableError{msg: st.Message()}, nil, cycle, start)
		return
	}
	s.handleFailure(ctx, fwk, qpi, st.AsError(), nil, cycle, start)
}

type unschedulableError struct{ msg string }

func (e *unschedulableError) Error() string { return e.msg }

func (s *Scheduler) bindingCycle(ctx context.Context, fwk *profile.Framework, state *plugin.CycleState, qpi *queue.QueuedPodInfo, assumed *corev1.Pod, cycle int64, start time.Time) {
	host := assumed.Spec.NodeName
	fail := func(st *plugin.Status) {
		fwk.RunReservePluginsUnreserve(ctx, state, assumed, host)
		if err := s.cache.ForgetPod(assumed); err != nil {
			s.log.V(1).Info("forget assumed pod", "pod", assumed.Namespace+"/"+assumed.Name, "err", err.Error())
		}
		// Freed resources may help other parked pods.
		s.queue.MoveAllToActiveOrBackoffQueue(ctx, plugin.ClusterEvent{Resource: plugin.Pod, ActionType: plugin.Delete, Label: "AssumedPodDelete"}, assumed, nil, nil)
		s.failWithStatus(ctx, fwk, qpi, st, cycle, start)
	}
	if st := fwk.WaitOnPermit(ctx, assumed); !st.IsSuccess() {
		fail(st)
		return
	}
	if st := fwk.RunPreBindPlugins(ctx, state, assumed, host); !st.IsSuccess() {
		fail(st)
		return
	}
	if st := fwk.RunBindPlugins(ctx, state, assumed, host); !st.IsSuccess() {
		if st.IsSkip() {
			st = plugin.AsStatus(fmt.Errorf("no bind plugin bound pod %s/%s", assumed.Namespace, assumed.Name))
		}
		fail(st)
		return
	}
	_ = s.cache.FinishBinding(assumed)
	s.queue.Done(qpi.Key())
	s.scheduled.Add(1)
	s.metrics.ObserveAttempt(fwk.ProfileName(), metrics.Scheduled, start)
	if rec := fwk.EventRecorder(); rec != nil {
		rec.Eventf(ctx, qpi.Pod, record.Normal, "Scheduled", "Successfully assigned %v/%v to %v", assumed.Namespace, assumed.Name, host)
	}
	fwk.RunPostBindPlugins(ctx, state, assumed, host)
	s.log.V(1).Info("pod bound", "pod", assumed.Namespace+"/"+assumed.Name, "node", host, "attempts", qpi.Attempts, "latency", time.Since(start))
}

// handleFailure re-queues the pod and reports the failure on it.
func (s *Scheduler) handleFailure(ctx context.Context, fwk *profile.Framework, qpi *queue.QueuedPodInfo, err error, nominating *plugin.NominatingInfo, cycle int64, start time.Time) {
	pod := qpi.Pod
	reason := ReasonSchedulerError
	var fitErr *plugin.FitError
	var uerr *unschedulableError
	if errors.As(err, &fitErr) || errors.As(err, &uerr) || errors.Is(err, ErrNoNodesAvailable) {
		reason = ReasonUnschedulable
		s.unschedulable.Add(1)
		s.metrics.ObserveAttempt(fwk.ProfileName(), metrics.Unschedulable, start)
	} else {
		qpi.UnschedulablePlugins = nil
		s.errs.Add(1)
		s.metrics.ObserveAttempt(fwk.ProfileName(), metrics.Error, start)
		s.log.Error(err, "Error scheduling pod; retrying", "pod", pod.Namespace+"/"+pod.Name)
	}
	msg := err.Error()
	if nominating.Mode() == plugin.ModeOverride {
		fwk.AddNominatedPod(qpi.PodInfo, nominating)
	}
	s.queue.AddUnschedulableIfNotPresent(ctx, qpi, cycle)
	s.queue.Done(qpi.Key())
	s.log.V(1).Info("unable to schedule pod", "pod", pod.Namespace+"/"+pod.Name, "reason", reason, "message", msg, "latency", time.Since(start))
	if rec := fwk.EventRecorder(); rec != nil {
		rec.Eventf(ctx, pod, record.Warning, "FailedScheduling", "%s", msg)
	}
	s.bindWG.Add(1)
	go func() {
		defer s.bindWG.Done()
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := s.patchScheduledCondition(pctx, pod, reason, msg, nominating); err != nil {
			s.log.V(1).Info("update pod condition failed", "err", err.Error())
		}
	}()
}

// schedulePod finds the best node for pod in the current snapshot.
func (s *Scheduler) schedulePod(ctx context.Context, fwk *profile.Framework, state *plugin.CycleState, pod *corev1.Pod) (string, error) {
	all, _ := s.snapshot.NodeInfos().List()
	if len(all) == 0 {
		return "", ErrNoNodesAvailable
	}
	feasible, diagnosis, err := s.findNodesThatFitPod(ctx, fwk, state, pod, all)
	if err != nil {
		return "", err
	}
	if len(feasible) == 0 {
		return "", &plugin.FitError{Pod: pod, NumAllNodes: len(all), Diagnosis: diagnosis}
	}
	if len(feasible) == 1 {
		return feasible[0].NodeName(), nil
	}
	if st := fwk.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
		return "", st.AsError()
	}
	if cap(s.scoreTotals) < len(feasible) {
		s.scoreTotals = make([]int64, len(feasible))
	}
	totals := s.scoreTotals[:len(feasible)]
	if st := fwk.RunScorePluginsInto(ctx, state, pod, feasible, totals); !st.IsSuccess() {
		return "", st.AsError()
	}
	return selectHost(feasible, totals), nil
}

func (s *Scheduler) findNodesThatFitPod(ctx context.Context, fwk *profile.Framework, state *plugin.CycleState, pod *corev1.Pod, all []*plugin.NodeInfo) ([]*plugin.NodeInfo, plugin.Diagnosis, error) {
	diagnosis := plugin.Diagnosis{NodeToStatus: plugin.NewDefaultNodeToStatus()}
	pfr, st := fwk.RunPreFilterPlugins(ctx, state, pod, all)
	if !st.IsSuccess() {
		if !st.IsRejected() {
			return nil, diagnosis, st.AsError()
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(st)
		diagnosis.PreFilterMsg = st.Message()
		diagnosis.AddPluginStatus(st)
		return nil, diagnosis, nil
	}
	// A nominated node (from preemption) is tried first.
	if nn := pod.Status.NominatedNodeName; nn != "" {
		if ni, err := s.snapshot.Get(nn); err == nil {
			if fwk.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni).IsSuccess() {
				return []*plugin.NodeInfo{ni}, diagnosis, nil
			}
		}
	}
	nodes := all
	if !pfr.AllNodes() {
		nodes = make([]*plugin.NodeInfo, 0, len(pfr.NodeNames))
		for name := range pfr.NodeNames {
			if ni, err := s.snapshot.Get(name); err == nil {
				nodes = append(nodes, ni)
			}
		}
	}
	feasible, err := s.findNodesThatPassFilters(ctx, fwk, state, pod, &diagnosis, nodes, len(all))
	return feasible, diagnosis, err
}

func (s *Scheduler) findNodesThatPassFilters(ctx context.Context, fwk *profile.Framework, state *plugin.CycleState, pod *corev1.Pod, diagnosis *plugin.Diagnosis, nodes []*plugin.NodeInfo, numAll int) ([]*plugin.NodeInfo, error) {
	var pct int32
	if p := fwk.PercentageOfNodesToScore(); p != nil {
		pct = *p
	}
	toFind := NumFeasibleNodesToFind(pct, len(nodes))
	n := len(nodes)
	if n == 0 {
		return nil, nil
	}
	start := s.nextStartNodeIndex % n
	// The feasible list is reused across cycles too: plugins get it in
	// PreScore and Score and must not keep it beyond the cycle.
	if cap(s.feasibleBuf) < toFind {
		s.feasibleBuf = make([]*plugin.NodeInfo, toFind)
	}
	feasible := s.feasibleBuf[:toFind]
	// The statuses buffer is reused across cycles (only the scheduling
	// goroutine runs this) and cleared after use.
	if cap(s.filterStatuses) < n {
		s.filterStatuses = make([]*plugin.Status, n)
	}
	statuses := s.filterStatuses[:n]
	defer clear(statuses)
	var found, processed atomic.Int32
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fwk.Parallelizer().Until(cctx, n, func(ctx context.Context, i int) {
		if int(found.Load()) >= toFind {
			return
		}
		ni := nodes[(start+i)%n]
		st := fwk.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
		processed.Add(1)
		if st.IsSuccess() {
			l := found.Add(1)
			if int(l) > toFind {
				cancel()
				found.Add(-1)
				processed.Add(-1)
				return
			}
			feasible[l-1] = ni
			if int(l) == toFind {
				cancel()
			}
			return
		}
		statuses[i] = st
	}, "Filter")
	s.nextStartNodeIndex = (start + int(processed.Load())) % max(numAll, 1)
	var firstErr error
	for i, st := range statuses {
		if st == nil {
			continue
		}
		if !st.IsRejected() {
			if firstErr == nil {
				firstErr = st.AsError()
			}
			continue
		}
		diagnosis.NodeToStatus.Set(nodes[(start+i)%n].Node().Name, st)
		diagnosis.AddPluginStatus(st)
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return feasible[:found.Load()], nil
}
