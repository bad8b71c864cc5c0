// Package cache is the scheduler's view of the cluster: every node with the
// pods bound or assumed on it, kept current from informer events, and the
// per-cycle Snapshot that plugins read through plugin.SharedLister.
//
// Assumed pods: when the scheduler picks a node it calls AssumePod before the
// asynchronous bind, so the next cycles already see the pod's resources on
// that node. FinishBinding starts the assumed pod's TTL; if the informer does
// not deliver the bound pod (AddPod with spec.nodeName) within the TTL the
// assumption expires and is removed. ForgetPod undoes an assumption after a
// failed bind.
//
// Snapshots are updated incrementally: every change to a node bumps a
// generation number owned by the Cache and moves the node to the head of a
// recency list; UpdateSnapshot copies only the nodes whose generation is newer
// than the snapshot's. A Snapshot is immutable between two UpdateSnapshot calls
// and must only be used by one scheduling cycle at a time.
//
// All Cache methods are safe for concurrent use.
package cache
