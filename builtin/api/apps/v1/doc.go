// Package v1 holds the apps/v1 kinds: Deployment, ReplicaSet, StatefulSet,
// DaemonSet and ControllerRevision. It owns their Go types (Kubernetes' JSON,
// protobuf and strategic-merge-patch tags), their defaults (including the pod
// defaults of every template), validation, and registration with the API server:
// strategies, status and scale subresources, printer columns.
package v1
