// Package podautoscaler is the HorizontalPodAutoscaler controller
// (kube-controller-manager's "horizontalpodautoscaling"), following
// Kubernetes' algorithm.
//
// Every autoscaler is synced when it changes and then every SyncPeriod
// (15 s): the target's scale is read and written through its scale
// subresource (Deployments, StatefulSets, ReplicaSets, any custom resource
// with a scale subresource), so it goes to the server; pods come from the
// informer cache; usage comes from metrics.k8s.io (PodMetrics), which the API
// server answers from the node agents.
//
// Resource and ContainerResource metrics with Utilization (percent of the
// pods' requests) and AverageValue targets are computed as Kubernetes does
// (replicas.go): a 10% tolerance (or the behavior's per-direction tolerance); pods being deleted or failed are ignored;
// pending pods, and for CPU pods inside the initialization period that are
// unready or not yet measured a full window since they became ready, are
// "unready": assumed idle when scaling up, left out otherwise; running pods
// without a metric are assumed at 100% of their request (at least the
// target) when scaling down and idle when scaling up; a correction that
// flips the direction keeps the current count. Several metrics take the
// highest proposal; a failing metric blocks scaling down. Pods, Object and
// External metrics need a custom or external metrics API, which Converge does
// not serve: they report ScalingActive=False.
//
// The proposal is then normalized (normalize.go): without behavior, by the
// highest recommendation of the DownscaleStabilization window (5 min) and a
// scale-up limit of max(2×current, 4); with behavior, by each direction's
// stabilization window and rate policies (Pods/Percent per period, Max, Min
// or Disabled selection), counting the scale events of each period. Both
// keep their history in memory per autoscaler, as Kubernetes does: a
// restarted controller starts with none. min/maxReplicas bound the result.
//
// Status carries currentReplicas, desiredReplicas, currentMetrics,
// lastScaleTime and the conditions AbleToScale (SucceededGetScale,
// FailedGetScale, SucceededRescale, FailedUpdateScale, ReadyForNewScale,
// ScaleDownStabilized, ScaleUpStabilized), ScalingActive (ValidMetricFound,
// FailedGetResourceMetric, InvalidSelector, ScalingDisabled) and
// ScalingLimited (DesiredWithinRange, TooFewReplicas, TooManyReplicas,
// ScaleUpLimit, ScaleDownLimit); events SuccessfulRescale, FailedRescale,
// FailedGetScale, FailedGetResourceMetric, FailedComputeMetricsReplicas,
// SelectorRequired.
package podautoscaler
