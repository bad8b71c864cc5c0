package containerd

import (
	"context"
	"fmt"
	"time"

	cgroup1stats "github.com/containerd/cgroups/v3/cgroup1/stats"
	cgroup2stats "github.com/containerd/cgroups/v3/cgroup2/stats"
	"github.com/containerd/typeurl/v2"

	"github.com/converge-dev/converge/builtin/node/cri"
)

var _ cri.StatsProvider = (*Runtime)(nil)

// ContainerStats implements cri.StatsProvider with the task's cgroup metrics,
// as the CRI plugin reads them: CPU is the cgroup's cumulative usage, the
// working set is memory usage minus inactive file pages (cgroup v2:
// memory.current − inactive_file; v1: usage_in_bytes − total_inactive_file).
func (r *Runtime) ContainerStats(ctx context.Context, id string) (cri.ContainerStats, error) {
	ctx = r.nsCtx(ctx)
	task, exited, err := r.taskAndExit(ctx, id)
	if err != nil {
		return cri.ContainerStats{}, err
	}
	if task == nil {
		return cri.ContainerStats{}, fmt.Errorf("stats of container %s: %w", id, errNoTask)
	}
	select {
	case <-exited:
		return cri.ContainerStats{}, fmt.Errorf("stats of container %s: %w", id, errNotRunning)
	default:
	}
	m, err := task.Metrics(ctx)
	if err != nil {
		return cri.ContainerStats{}, fmt.Errorf("metrics of container %s: %w", id, err)
	}
	data, err := typeurl.UnmarshalAny(m.Data)
	if err != nil {
		return cri.ContainerStats{}, fmt.Errorf("decode metrics of container %s: %w", id, err)
	}
	st := cri.ContainerStats{Timestamp: time.Now()}
	if ts := m.Timestamp; ts != nil {
		st.Timestamp = ts.AsTime()
	}
	switch v := data.(type) {
	case *cgroup2stats.Metrics:
		st.CPUUsageNanos = v.GetCPU().GetUsageUsec() * 1000
		st.MemoryWorkingSetBytes = workingSet(v.GetMemory().GetUsage(), v.GetMemory().GetInactiveFile())
	case *cgroup1stats.Metrics:
		st.CPUUsageNanos = v.GetCPU().GetUsage().GetTotal()
		st.MemoryWorkingSetBytes = workingSet(v.GetMemory().GetUsage().GetUsage(), v.GetMemory().GetTotalInactiveFile())
	default:
		return cri.ContainerStats{}, fmt.Errorf("metrics of container %s: unknown type %T", id, data)
	}
	return st, nil
}

// workingSet is usage minus inactive file pages, never below zero.
func workingSet(usage, inactiveFile uint64) uint64 {
	if inactiveFile > usage {
		return 0
	}
	return usage - inactiveFile
}
