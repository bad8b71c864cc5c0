// Package metricsapi serves metrics.k8s.io/v1beta1 (NodeMetrics, PodMetrics)
// inside the API server, as metrics-server does behind the aggregator: get and
// list of nodes, and of pods in a namespace or in all of them, with label
// selectors (and metadata.name field selectors). Figures come from the node
// agents' /stats/summary (package builtin/node/stats), fetched concurrently
// for the nodes a request needs and kept for CacheTTL, so `kubectl top` and the
// HorizontalPodAutoscaler polling together cost one fetch per node and period.
//
// The handler runs inside the API server's filters (after authentication and
// authorization, like the access reviews), so RBAC decides who reads metrics:
// the bootstrap role system:aggregated-metrics-reader is aggregated into view,
// edit and admin. Nodes and pods are read from the API server's watch cache
// (Attach). A node whose agent cannot be reached, or that has no CPU rate yet,
// has no NodeMetrics; a pod is listed only when every running container has
// both figures, as metrics-server does. Writes and watches answer 405.
package metricsapi
