// Package run runs one operator standalone, against any Kubernetes-compatible
// API server reached through a kubeconfig: Converge, or a real cluster.
//
// An operator's own main package is one line:
//
//	func main() { run.Main(myop.New()) }
//
// Main parses the usual flags (--kubeconfig, --context, --leader-elect,
// --metrics-bind-address, --health-probe-bind-address, ...), stops on SIGINT
// or SIGTERM and exits 1 on failure. Run is the same without flags and exit,
// for programs and tests.
//
// What runs: a manager.Manager with the operator's own scheme, Lease-based
// leader election (Lease "<name>-operator" in the leader-election namespace),
// /metrics, and /healthz + /readyz (readiness waits for the informers to sync);
// then operators.Install (CRDs applied and Established, Setup, health checks),
// then the manager until the context ends or leadership is lost.
//
// `converge operator run DIR` builds and runs the operator's main package with
// `go run` (see Command), so the operator runs exactly as its own binary would,
// with no plugin version constraints.
package run
