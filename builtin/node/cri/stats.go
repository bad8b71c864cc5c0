package cri

import (
	"context"
	"time"
)

// ContainerStats is a container's resource usage at one instant, as cadvisor
// reports it to the kubelet.
type ContainerStats struct {
	// Timestamp is when the figures were read.
	Timestamp time.Time
	// CPUUsageNanos is the cumulative CPU time the container used (user and
	// system), in nanoseconds; a rate comes from two readings.
	CPUUsageNanos uint64
	// MemoryWorkingSetBytes is the memory the container cannot give back
	// without being OOM-killed: usage minus inactive file pages.
	MemoryWorkingSetBytes uint64
}

// StatsProvider is implemented by runtimes that measure their containers'
// resource usage. ContainerStats returns ErrNotFound for an unknown or exited
// container.
type StatsProvider interface {
	ContainerStats(ctx context.Context, id string) (ContainerStats, error)
}
