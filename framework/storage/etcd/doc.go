// Package etcd implements storage.Interface on etcd v3 through clientv3, and
// owns everything needed to reach an etcd: an embedded single-member server
// (StartEmbedded), a client for an external cluster (Connect) and the periodic
// compactor (RunCompactor). The key layout is the caller's business; Store uses
// the keys it is given verbatim.
//
// # Error mapping
//
// Every error returned by Store wraps one of storage's sentinels when etcd's
// answer has a storage meaning, and otherwise wraps the clientv3 error:
//
//   - Get of an absent key, Update or Delete of an absent key: storage.ErrNotFound.
//   - Create whose txn compare CreateRevision(key)==0 failed: storage.ErrExists.
//   - Update or Delete whose compare ModRevision(key)==expected failed while the
//     key exists: storage.ErrConflict.
//   - etcdserver "mvcc: required revision has been compacted"
//     (rpctypes.ErrCompacted) from List, Compact or a watch, and a watch response
//     with CompactRevision != 0: storage.ErrCompacted.
//   - etcdserver "mvcc: required revision is a future revision"
//     (rpctypes.ErrFutureRev): storage.ErrFutureRevision.
//
// Anything else (no leader, timeouts, connection errors) is returned wrapped with
// the operation and key, and does not match any sentinel.
//
// # Consistency
//
// Reads are linearizable (clientv3's default). List reads one snapshot at
// ListOptions.Revision, so the pages of a paginated list agree with each other
// as long as that revision is not compacted in between. Watch delivers events in
// revision order; a watch ends with a final Event carrying Err when etcd cancels
// it (compaction, lost leader, closed client), and its channel is closed once the
// caller's context ends. Watches run with clientv3.WithRequireLeader, so a member
// cut off from its cluster fails the watch instead of hanging.
//
// # Compaction
//
// Store.Compact compacts unconditionally. RunCompactor is what a server runs: it
// keeps one interval of history and coordinates several API servers sharing one
// cluster through a compare-and-swap on CompactRevKey, so only one of them
// compacts per interval.
package etcd
