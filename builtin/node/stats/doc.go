// Package stats measures a node's resource usage for the metrics pipeline, as
// cadvisor does for the kubelet. A Sampler reads, every Interval, the node's
// totals (/proc/stat, /proc/meminfo) and each running container's cumulative
// CPU time and memory working set (through the runtime's cri.StatsProvider),
// keeps the last two readings of each, and turns them into:
//
//   - a Summary (JSON, the shape of the kubelet's /stats/summary with
//     usageNanoCores computed over the last sampling window, plus that window),
//     which the API server's metrics.k8s.io reads;
//   - the Prometheus text of the kubelet's /metrics/resource
//     (node_cpu_usage_seconds_total, node_memory_working_set_bytes,
//     container_*, pod_*), cumulative counters with their sample timestamps.
//
// Figures are eventually consistent: a container appears after its first
// reading and has a CPU rate after its second. The Sampler is safe for
// concurrent use; Start runs the sampling loop until its context ends.
package stats
