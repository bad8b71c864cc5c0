package v1

import (
	"context"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Pods are deleted gracefully, as in Kubernetes: a DELETE of a pod bound to a
// node and not finished marks it (deletionTimestamp = now + grace,
// deletionGracePeriodSeconds = grace) and the node agent stops its containers
// (preStop, SIGTERM, SIGKILL at the deadline), writes the final status and
// deletes it with a grace of 0. A pod bound to a node that does not exist is
// marked the same way; the pod garbage collector (builtin/controllers/podgc)
// force-deletes it once the node has been missing for its quarantine. See
// PodGracePeriod for the grace.

// PodDeletion is the pods' registry.Deletion.
func PodDeletion() *registry.Deletion {
	return &registry.Deletion{
		GracePeriod: func(_ context.Context, obj map[string]any, requested *int64) (int64, error) {
			return PodGracePeriod(obj, requested), nil
		},
	}
}

// PodGracePeriod is Kubernetes' pod CheckGracefulDelete: the request's
// gracePeriodSeconds if given, else spec.terminationGracePeriodSeconds (0 when
// unset); 0 for a pod no node runs (unbound) or that finished (Succeeded or
// Failed). A pod bound to a node that does not exist gets its grace like any
// bound pod: as in Kubernetes it stays Terminating until the pod garbage
// collector force-deletes it.
func PodGracePeriod(obj map[string]any, requested *int64) int64 {
	var period int64
	if requested != nil {
		period = *requested
	} else if g, ok := api.NestedInt64(obj, "spec", "terminationGracePeriodSeconds"); ok {
		period = g
	}
	if period == 0 {
		return 0
	}
	if api.NestedString(obj, "spec", "nodeName") == "" {
		return 0
	}
	switch PodPhase(api.NestedString(obj, "status", "phase")) {
	case PodSucceeded, PodFailed:
		return 0
	}
	return period
}
