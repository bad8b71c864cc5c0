// Package cri (container runtime interface) is the contract between the node agent and the container
// runtimes that run a pod's containers: process (host processes, the default of
// `converge up`), containerd (real containers through containerd's Go client) and
// simulated (no processes; thousands of nodes in one process). Each runtime lives
// in a sub-package and passes the conformance suite in runtimetest.
//
// The agent owns pod semantics (init order, restart policy, probes, volumes as
// per-pod directories, env and $(VAR) expansion); a runtime only creates, starts,
// inspects, stops and removes single containers, captures their output to the
// log file it is given, and reports exit codes.
//
// Optional behaviour is a separate interface found by type assertion: Lister
// (containers that outlive the agent), ImageService (pull with per-registry
// Credentials, status, list, remove: the agent applies imagePullPolicy before
// Start, which itself never pulls) and ImageFS (the image filesystem's usage,
// for image garbage collection). The containerd runtime implements
// ImageService and ImageFS; process and simulated take any image reference.
//
// Runtimes that keep their containers in their own memory (process, simulated)
// share Table: the index by ID, and Status, Wait and Stop carried out over
// each container's Tracked methods (status, exit, SIGTERM, SIGKILL).
package cri
