// Package noderesourcesfit is the NodeResourcesFit plugin: Filter rejects
// nodes without enough allocatable cpu, memory, ephemeral-storage, pods or
// extended resources for the pod's requests ("Insufficient cpu", "Too many
// pods"); Score ranks nodes by one of three strategies selected by args:
// LeastAllocated (default, spreads), MostAllocated (packs) and
// RequestedToCapacityRatio (a piecewise-linear shape over utilisation).
package noderesourcesfit
