package podutil

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/cache"
)

// NodeNameField is the pod field IndexByNode indexes: a cache.Reader lists the
// pods of node n with client.MatchingFields{NodeNameField: n}.
const NodeNameField = "spec.nodeName"

// IndexByNode indexes the pods of f by the node they are bound to ("" for
// unscheduled pods).
func IndexByNode(f *cache.SharedInformers) error {
	return cache.IndexField(f, NodeNameField, func(p *corev1.Pod) []string { return []string{p.Spec.NodeName} })
}
