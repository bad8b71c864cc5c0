// Package manager runs everything an operator process needs: the shared
// informers (caches), controllers and other Runnables, the /metrics endpoint,
// the /healthz and /readyz endpoints, Lease-based leader election and event
// recorders.
//
// Manager is a concrete type with a few accessors (Client, Scheme, Informers,
// Logger, Registry, EventRecorder) and Add; packages that consume it (builder)
// define the small interface they need.
//
// # Lifecycle
//
// Start(ctx) blocks until ctx ends, a Runnable fails, or leadership is lost:
//
//  1. The metrics and health servers listen (when their addresses are set).
//  2. The shared informers start; informers requested later start at once.
//  3. Runnables that do not need leader election (NeedLeaderElection() false)
//     start.
//  4. With leader election, the manager acquires the Lease and then starts the
//     other Runnables (controllers by default); without it they start at once.
//     Runnables added after Start join their group immediately.
//  5. On shutdown, leader-elected Runnables are stopped first and waited for,
//     then the Lease is released (so a standby takes over at once), then the
//     other Runnables, the informers and the servers. The whole shutdown is
//     bounded by GracefulShutdownTimeout; Runnables still running after it are
//     abandoned and Start returns ErrShutdownTimeout.
//
// Start returns nil when ctx ended, the first Runnable error otherwise
// (leaderelection.ErrLost when leadership was lost: the process should exit,
// as its controllers may no longer act). A Manager starts once.
//
// # Endpoints
//
// /metrics serves the manager's own Prometheus registry (never the global
// default): controller_runtime_reconcile_total{controller,result},
// controller_runtime_reconcile_time_seconds, controller_runtime_reconcile_errors_total,
// controller_runtime_reconcile_panics_total, workqueue_*, leader_election_master_status,
// plus Go and process collectors. /healthz and /readyz run the named checks
// added with AddHealthzCheck and AddReadyzCheck (package healthz).
package manager
