package etcd

import (
	"path/filepath"
	"strings"

	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
)

// RestoreAvailable reports whether this build can restore snapshots.
const RestoreAvailable = true

// restore runs etcdutl's snapshot restore: it rewrites the snapshot's backend
// with the new membership, writes a WAL and a raft snapshot for it, and checks
// the snapshot's hash.
func restore(o RestoreOptions) error {
	return snapshot.NewV3(zap.NewNop()).Restore(snapshot.RestoreConfig{
		SnapshotPath:        o.SnapshotPath,
		Name:                o.Name,
		OutputDataDir:       o.DataDir,
		OutputWALDir:        filepath.Join(o.DataDir, "member", "wal"),
		PeerURLs:            strings.Split(o.PeerURL, ","),
		InitialCluster:      o.InitialCluster,
		InitialClusterToken: o.InitialClusterToken,
		SkipHashCheck:       false,
	})
}
