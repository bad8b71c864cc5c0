// Package taints evaluates pod tolerations against node taints with
// Kubernetes' semantics; shared by TaintToleration, NodeUnschedulable and
// plugins that honour a pod's node taints policy.
package taints
