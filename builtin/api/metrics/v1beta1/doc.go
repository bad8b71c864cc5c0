// Package v1beta1 holds the metrics.k8s.io/v1beta1 kinds: NodeMetrics and
// PodMetrics, the resource usage metrics-server serves and `kubectl top` and
// the HorizontalPodAutoscaler read. They are read-only and never stored: the
// API server answers get and list of them from the node agents' figures
// (package builtin/metricsapi); Resources only describes them for discovery,
// authorization and Table output.
package v1beta1
