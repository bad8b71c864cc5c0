// Package nodeselector evaluates a pod's node constraints against a Node:
// spec.nodeSelector and node affinity terms (matchExpressions on labels,
// matchFields on metadata.name), with Kubernetes' semantics. It is shared by
// the NodeAffinity plugin and by plugins that honour a pod's node inclusion
// policy (PodTopologySpread).
package nodeselector
