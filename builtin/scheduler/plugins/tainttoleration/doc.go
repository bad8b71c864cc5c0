// Package tainttoleration is the TaintToleration plugin: Filter rejects nodes
// with a NoSchedule or NoExecute taint the pod does not tolerate ("node(s) had
// untolerated taint {key: value}"); Score prefers nodes with fewer untolerated
// PreferNoSchedule taints.
package tainttoleration
