// Package proc runs the server processes the benchmarks compare: started
// until the benchmark ends, their CPU time read from /proc, on free ports.
package proc
