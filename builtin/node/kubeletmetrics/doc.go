// Package kubeletmetrics holds the node agent's Prometheus metrics, named and
// labelled like the kubelet's: kubelet_running_pods,
// kubelet_running_containers{container_state},
// kubelet_pod_start_duration_seconds,
// kubelet_pod_worker_duration_seconds{operation_type} and
// kubelet_runtime_operations_total, kubelet_runtime_operations_duration_seconds
// and kubelet_runtime_operations_errors_total{operation_type}. They are
// registered on the registry the agent is given and served on its HTTPS port
// at /metrics.
package kubeletmetrics
