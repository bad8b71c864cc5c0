// Package schedulinggates is the SchedulingGates PreEnqueue plugin: a pod
// with spec.schedulingGates never enters the active queue until every gate is
// removed.
package schedulinggates
