// Package v2 holds autoscaling/v2: the HorizontalPodAutoscaler with its
// metric sources (Resource, ContainerResource, Pods, Object, External),
// scaling behavior and status, Kubernetes' defaults (minReplicas 1, an 80%
// CPU utilization metric when none is given, the default scale-up and
// scale-down rules filled into a given behavior) and validation, and the
// served resource in v2 (storage) and v1 (converted, see package
// builtin/api/autoscaling/v1's HorizontalPodAutoscaler).
package v2
