// Package logs reads container log files in the CRI format
// ("<RFC3339Nano> stdout|stderr F|P <text>") the runtimes write, renders them as
// `kubectl logs` expects (tailLines, timestamps, sinceTime/sinceSeconds,
// limitBytes, follow) and rotates them by size (copy then truncate, so the
// runtime's O_APPEND writer keeps going).
package logs
