// Package simulated is a runtime without processes, for scale tests and
// KWOK-style simulated nodes.
//
// A container "runs" its Args: when Args[1:] is a script (package script, the
// conformance helper's language) it is interpreted — output goes to LogPath in
// the CRI format, env/pwd come from the spec, files are read and written through
// the spec's mounts, SIGTERM and SIGKILL behave as for the helper — so the
// runtime passes the same conformance suite as real runtimes. Any other command
// idles until stopped and then exits 0. Options.ImagePresent simulates missing
// images, Options.StartDelay slow starts. Nothing is shared between Runtime
// values; one Runtime is safe for concurrent use.
package simulated
