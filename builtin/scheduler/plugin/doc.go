// Package plugin defines the scheduler's plugin API: the extension points a
// plugin may implement, the Status a plugin returns, the per-cycle CycleState,
// the NodeInfo view of one node and the SharedLister snapshot plugins read, the
// Handle given to plugin factories and the Registry that maps plugin names to
// factories.
//
// The model is kube-scheduler's: a Plugin has a Name and implements any of the
// one-purpose extension-point interfaces (PreEnqueuePlugin, PreFilterPlugin,
// FilterPlugin, PostFilterPlugin, PreScorePlugin, ScorePlugin, ReservePlugin,
// PermitPlugin, PreBindPlugin, BindPlugin, PostBindPlugin); the runtime finds
// them by type assertion. A nil *Status means success. Scores are in
// [MinNodeScore, MaxNodeScore] after normalisation.
//
// Contract for plugins:
//   - Filter and Score run concurrently for different nodes of one cycle; they
//     must only read the NodeInfo and CycleState they are given (CycleState is
//     safe for concurrent reads and writes, but plugins write in PreFilter and
//     PreScore, which run once per cycle).
//   - The snapshot (Handle.SnapshotSharedLister) is immutable for the duration of
//     a scheduling cycle; NodeInfo values returned by it must not be modified,
//     except the copies handed to PreFilterExtensions.AddPod/RemovePod by the
//     preemption logic, which are clones.
//   - Every rejection records why: an Unschedulable status carries one or more
//     reasons, worded like Kubernetes', which the scheduler aggregates into the
//     "0/N nodes are available: ..." summary.
package plugin
