package stats

import "github.com/converge-dev/converge/framework/api"

// Summary is a node's resource usage: the subset of the kubelet's
// stats/v1alpha1 Summary that metrics-server reads, plus WindowSeconds.
type Summary struct {
	Node NodeStats  `json:"node"`
	Pods []PodStats `json:"pods"`
}

// NodeStats is the node's total usage.
type NodeStats struct {
	NodeName  string       `json:"nodeName"`
	StartTime api.Time     `json:"startTime,omitzero"`
	CPU       *CPUStats    `json:"cpu,omitempty"`
	Memory    *MemoryStats `json:"memory,omitempty"`
}

// PodReference names a pod.
type PodReference struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	UID       string `json:"uid"`
}

// PodStats is a pod's usage: the sum of its containers'.
type PodStats struct {
	PodRef     PodReference     `json:"podRef"`
	StartTime  api.Time         `json:"startTime,omitzero"`
	Containers []ContainerStats `json:"containers"`
	CPU        *CPUStats        `json:"cpu,omitempty"`
	Memory     *MemoryStats     `json:"memory,omitempty"`
}

// ContainerStats is one container's usage.
type ContainerStats struct {
	Name      string       `json:"name"`
	StartTime api.Time     `json:"startTime,omitzero"`
	CPU       *CPUStats    `json:"cpu,omitempty"`
	Memory    *MemoryStats `json:"memory,omitempty"`
}

// CPUStats is CPU usage at Time.
type CPUStats struct {
	Time api.Time `json:"time"`
	// UsageNanoCores is the rate over the last WindowSeconds (absent until
	// two readings exist).
	UsageNanoCores *uint64 `json:"usageNanoCores,omitempty"`
	// UsageCoreNanoSeconds is the cumulative CPU time.
	UsageCoreNanoSeconds *uint64 `json:"usageCoreNanoSeconds,omitempty"`
	// WindowSeconds is the time between the two readings UsageNanoCores
	// comes from (not in the kubelet's Summary; metrics-server computes it).
	WindowSeconds float64 `json:"windowSeconds,omitempty"`
}

// MemoryStats is memory usage at Time.
type MemoryStats struct {
	Time            api.Time `json:"time"`
	WorkingSetBytes *uint64  `json:"workingSetBytes,omitempty"`
}
