package etcd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrSnapshotCorrupt is returned when a snapshot file's trailing checksum does not
// match its content (truncated or damaged file).
var ErrSnapshotCorrupt = errors.New("etcd: snapshot is corrupt")

// SnapshotInfo describes a saved snapshot.
type SnapshotInfo struct {
	// Path is the snapshot file.
	Path string
	// Size is its size in bytes.
	Size int64
	// SHA256 is the hex SHA-256 of the whole file (what `sha256sum` prints).
	SHA256 string
	// Revision is the store revision read just before the snapshot was taken:
	// the snapshot holds at least this revision.
	Revision int64
	// EtcdVersion is the storage version reported by the member (may be empty).
	EtcdVersion string
	// Endpoints are the client's endpoints (the snapshot is of one of them).
	Endpoints string
	// Took is how long the save took.
	Took time.Duration
}

// snapshotHashLen is the length of the SHA-256 etcd appends to a snapshot stream.
const snapshotHashLen = sha256.Size

// SaveSnapshot streams a snapshot of the backend database of one member (the one
// the client's balancer picks; give a single-endpoint client to choose it) to
// path. It writes path+".part", checks the SHA-256 etcd appends to the stream,
// fsyncs, renames to path and fsyncs the directory, so path is either absent or a
// complete, verified snapshot. An existing file at path is replaced.
func SaveSnapshot(ctx context.Context, client *clientv3.Client, path string) (*SnapshotInfo, error) {
	start := time.Now()
	where := strings.Join(client.Endpoints(), ",")
	info, err := saveSnapshot(ctx, client, where, path)
	if err != nil {
		return nil, fmt.Errorf("save etcd snapshot from %s to %s: %w", where, path, err)
	}
	info.Took = time.Since(start)
	return info, nil
}

func saveSnapshot(ctx context.Context, client *clientv3.Client, endpoint, path string) (info *SnapshotInfo, err error) {
	rev, err := client.Get(ctx, revisionProbeKey, clientv3.WithCountOnly())
	if err != nil {
		return nil, fmt.Errorf("read revision: %w", err)
	}
	resp, err := client.SnapshotWithVersion(ctx)
	if err != nil {
		return nil, err
	}
	defer resp.Snapshot.Close()
	part := path + ".part"
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer func() {
		if f != nil {
			_ = f.Close()
		}
		if err != nil {
			_ = os.Remove(part)
		}
	}()
	whole := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, whole), resp.Snapshot)
	if err != nil {
		return nil, fmt.Errorf("stream snapshot: %w", err)
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		f = nil
		return nil, err
	}
	f = nil
	if err := VerifySnapshot(part); err != nil {
		return nil, err
	}
	if err := os.Rename(part, path); err != nil {
		return nil, err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return &SnapshotInfo{
		Path: path, Size: n, SHA256: hex.EncodeToString(whole.Sum(nil)),
		Revision: rev.Header.Revision, EtcdVersion: resp.Version, Endpoints: endpoint,
	}, nil
}

// VerifySnapshot checks the integrity of a snapshot file written by SaveSnapshot
// or etcdctl: its last 32 bytes must be the SHA-256 of the rest. A mismatch is
// ErrSnapshotCorrupt.
func VerifySnapshot(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("verify snapshot: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("verify snapshot: %w", err)
	}
	size := fi.Size()
	// A bbolt database is a whole number of pages (at least 4 of 4 KiB here)
	// followed by the hash.
	if size <= snapshotHashLen || (size-snapshotHashLen)%512 != 0 {
		return fmt.Errorf("verify snapshot %s: %w: size %d is not a database plus a SHA-256", path, ErrSnapshotCorrupt, size)
	}
	h := sha256.New()
	if _, err := io.CopyN(h, f, size-snapshotHashLen); err != nil {
		return fmt.Errorf("verify snapshot %s: %w", path, err)
	}
	want := make([]byte, snapshotHashLen)
	if _, err := io.ReadFull(f, want); err != nil {
		return fmt.Errorf("verify snapshot %s: %w", path, err)
	}
	if !bytes.Equal(h.Sum(nil), want) {
		return fmt.Errorf("verify snapshot %s: %w: SHA-256 mismatch", path, ErrSnapshotCorrupt)
	}
	return nil
}

// RestoreOptions configure RestoreSnapshot's cluster variant.
type RestoreOptions struct {
	// SnapshotPath is the snapshot file (required).
	SnapshotPath string
	// DataDir is the new member's data directory (required); it must not exist
	// or be empty.
	DataDir string
	// Name and PeerURL are the restored member's (required).
	Name, PeerURL string
	// InitialCluster lists all members of the restored cluster as name=peerURL
	// (Name=PeerURL when empty): restore every member from the same snapshot with
	// the same InitialCluster and InitialClusterToken.
	InitialCluster string
	// InitialClusterToken is the new cluster's token; DefaultClusterToken when
	// empty. It must be what the members are then started with.
	InitialClusterToken string
}

// RestoreSnapshot restores the snapshot at snapshotPath into dataDir as the data
// of a new single-member cluster whose member is name at peerURL (etcdutl
// snapshot restore). Start it with StartMember (or StartEmbedded for the
// embedded etcd of `converge up`) on that data dir; grow the cluster with member
// add afterwards. The keys and their revisions are kept; cluster and member IDs
// are new.
func RestoreSnapshot(snapshotPath, dataDir, name, peerURL string) error {
	return RestoreCluster(RestoreOptions{SnapshotPath: snapshotPath, DataDir: dataDir, Name: name, PeerURL: peerURL})
}

// RestoreCluster is RestoreSnapshot for one member of a new multi-member cluster.
func RestoreCluster(o RestoreOptions) error {
	if o.InitialCluster == "" {
		o.InitialCluster = o.Name + "=" + o.PeerURL
	}
	if o.InitialClusterToken == "" {
		o.InitialClusterToken = DefaultClusterToken
	}
	var errs []error
	if o.SnapshotPath == "" {
		errs = append(errs, errors.New("snapshot path is required"))
	}
	if o.DataDir == "" {
		errs = append(errs, errors.New("data dir is required"))
	}
	if o.Name == "" {
		errs = append(errs, errors.New("name is required"))
	}
	if err := checkURL("peer URL", o.PeerURL, strings.HasPrefix(o.PeerURL, "https:")); err != nil {
		errs = append(errs, err)
	} else if o.Name != "" {
		if err := checkInitialCluster(o.InitialCluster, o.Name, o.PeerURL); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("restore etcd snapshot: invalid options: %w", err)
	}
	if entries, err := os.ReadDir(o.DataDir); err == nil && len(entries) > 0 {
		return fmt.Errorf("restore etcd snapshot: data dir %s is not empty; restore into a new directory", o.DataDir)
	}
	if err := VerifySnapshot(o.SnapshotPath); err != nil {
		return fmt.Errorf("restore etcd snapshot: %w", err)
	}
	if err := restore(o); err != nil {
		return fmt.Errorf("restore etcd snapshot %s into %s: %w", o.SnapshotPath, o.DataDir, err)
	}
	return nil
}

// syncDir fsyncs a directory so that a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
