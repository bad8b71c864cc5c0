// Package v1 holds the autoscaling/v1 kinds: Scale, the body of the scale
// subresource of Deployments, ReplicaSets, StatefulSets and custom resources,
// and the v1 form of the HorizontalPodAutoscaler (a CPU utilization target),
// stored as autoscaling/v2 and converted (Convert, FromV2, ToV2). Resources
// returns the horizontalpodautoscalers resource in both versions.
package v1
