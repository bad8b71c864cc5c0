// Package runtimetest is the conformance suite every cri.Runtime passes
// (process, containerd, simulated).
//
// RunConformance runs subtests against fresh runtimes: start and exit codes,
// logs in the CRI format appended to the given file, env, working directory,
// mounts, stop with grace then kill, exec, unknown IDs, invalid specs and
// concurrent starts. Containers run the helper program (./helper), whose
// arguments are a script (package script); BuildHelper compiles it as a static
// binary. Host runtimes run it directly; the containerd runtime packs it into
// an image; the simulated runtime interprets the script without a process.
package runtimetest
