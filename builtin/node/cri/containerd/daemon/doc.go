// Package daemon runs a private containerd daemon as a child process, for tests,
// demos and `converge up` on machines where no containerd service runs.
//
// Start writes a config file under Options.Dir (root, state, the gRPC and ttrpc
// sockets, the CRI plugin disabled), launches `containerd --config`, and returns
// once the gRPC socket accepts connections. The daemon is stopped (SIGTERM, then
// SIGKILL after Options.StopTimeout) when the context given to Start ends;
// Wait blocks until it has exited.
//
// Containers outlive the daemon: containerd's shims keep running after it stops.
// Callers remove their containers before cancelling the context (the containerd
// runtime's RemoveAll does it).
//
// When the containerd binary is missing, Start fails with ErrNotInstalled, whose
// message says how to install it.
package daemon
