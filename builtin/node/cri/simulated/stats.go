package simulated

import (
	"context"
	"fmt"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
)

var _ cri.StatsProvider = (*Runtime)(nil)

// Usage is the steady resource usage a simulated container reports.
type Usage struct {
	// CPUMilli is the CPU it burns, in millicores.
	CPUMilli int64
	// MemoryBytes is its memory working set.
	MemoryBytes uint64
}

// DefaultUsage is what a container reports when Options.Usage is nil: 1
// millicore and 4 MiB, a small idle process.
var DefaultUsage = Usage{CPUMilli: 1, MemoryBytes: 4 << 20}

// ContainerStats implements cri.StatsProvider: a running container's CPU
// counter grows at its Usage's rate from its start, its working set is
// constant.
func (r *Runtime) ContainerStats(_ context.Context, id string) (cri.ContainerStats, error) {
	c, err := r.containers.Get(id)
	if err != nil {
		return cri.ContainerStats{}, err
	}
	st := c.Status()
	if st.State != cri.StateRunning {
		return cri.ContainerStats{}, fmt.Errorf("container %s is not running: %w", id, cri.ErrNotFound)
	}
	u := DefaultUsage
	if r.opts.Usage != nil {
		u = r.opts.Usage(c.spec)
	}
	now := time.Now()
	ran := now.Sub(st.StartedAt)
	return cri.ContainerStats{
		Timestamp:             now,
		CPUUsageNanos:         uint64(float64(ran.Nanoseconds()) * float64(u.CPUMilli) / 1000),
		MemoryWorkingSetBytes: u.MemoryBytes,
	}, nil
}
