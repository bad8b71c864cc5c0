package v1

import (
	"context"
	"fmt"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Pods are deleted gracefully, as in Kubernetes: a DELETE of a pod bound to a
// node and not finished marks it (deletionTimestamp = now + grace,
// deletionGracePeriodSeconds = grace) and the node agent stops its containers
// (preStop, SIGTERM, SIGKILL at the deadline), writes the final status and
// deletes it with a grace of 0. See PodGracePeriod for the grace.

// NodeExistsFunc reports whether the Node name exists.
type NodeExistsFunc func(ctx context.Context, name string) (bool, error)

// PodDeletion is the pods' registry.Deletion. nodeExists may be nil (every
// node is taken to exist).
func PodDeletion(nodeExists NodeExistsFunc) *registry.Deletion {
	return &registry.Deletion{
		GracePeriod: func(ctx context.Context, obj map[string]any, requested *int64) (int64, error) {
			return PodGracePeriod(ctx, obj, requested, nodeExists)
		},
	}
}

// PodGracePeriod is Kubernetes' pod CheckGracefulDelete: the request's
// gracePeriodSeconds if given, else spec.terminationGracePeriodSeconds (0 when
// unset); 0 for a pod no node runs (unbound) or that finished (Succeeded or
// Failed). A pod bound to a node that does not exist is deleted at once too:
// no agent would ever finish its deletion. Kubernetes keeps such a pod
// Terminating until its pod garbage collector force-deletes it; we have no pod
// garbage collector, so the API server does it right away.
func PodGracePeriod(ctx context.Context, obj map[string]any, requested *int64, nodeExists NodeExistsFunc) (int64, error) {
	var period int64
	if requested != nil {
		period = *requested
	} else if g, ok := api.NestedInt64(obj, "spec", "terminationGracePeriodSeconds"); ok {
		period = g
	}
	if period == 0 {
		return 0, nil
	}
	node := api.NestedString(obj, "spec", "nodeName")
	if node == "" {
		return 0, nil
	}
	switch PodPhase(api.NestedString(obj, "status", "phase")) {
	case PodSucceeded, PodFailed:
		return 0, nil
	}
	if nodeExists != nil {
		ok, err := nodeExists(ctx, node)
		if err != nil {
			return 0, fmt.Errorf("look up node %s of pod %s: %w", node, api.NestedString(obj, "metadata", "name"), err)
		}
		if !ok {
			return 0, nil
		}
	}
	return period, nil
}
