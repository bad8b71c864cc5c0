// Package nodeunschedulable is the NodeUnschedulable filter: nodes with
// spec.unschedulable (cordoned) reject pods that do not tolerate the
// node.kubernetes.io/unschedulable:NoSchedule taint.
package nodeunschedulable
