package etcd

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/converge-dev/converge/framework/storage"
)

// revisionProbeKey is read (count only) to learn the store revision; it is never
// written.
const revisionProbeKey = "\x00converge-revision-probe"

// Store is storage.Interface on an etcd v3 cluster. It is safe for concurrent use
// and holds no state besides the client, which it does not own: closing the
// client is the caller's job.
type Store struct {
	client *clientv3.Client
	// local, when set, is etcd's KV service in this process: creates and
	// updates hand it their transaction as etcd's own request, built here
	// with the caller's value as it is (clientv3's Txn builder copies the
	// value, allocates a comparison, an op and a builder per call; at an
	// API create each that was ≈ 2.5 KB of a ConfigMap's ≈ 50).
	local txner
	// watches, when set, serves watches from the server's store in this
	// process while it is its cluster's only member (localWatches).
	watches *localWatches
}

// txner is the transaction call of etcd's KV service (pb.KVServer).
type txner interface {
	Txn(ctx context.Context, req *pb.TxnRequest) (*pb.TxnResponse, error)
}

var _ storage.Interface = (*Store)(nil)

// New returns a Store that reads and writes through client.
func New(client *clientv3.Client) *Store {
	return &Store{client: client}
}

// NewLocal returns a Store on the embedded server e in this process: reads go
// through e.LocalClient(), creates and updates straight to the server's KV
// service, watches straight to its store while it is the cluster's only
// member (through e.LocalClient() else). The caller closes e.
func NewLocal(e *Embedded) *Store {
	return &Store{client: e.LocalClient(), local: e.localKV, watches: e.watches}
}

// Get returns the key or storage.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) (storage.KeyValue, error) {
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return storage.KeyValue{}, fmt.Errorf("get %q: %w", key, mapError(err))
	}
	if len(resp.Kvs) == 0 {
		return storage.KeyValue{}, fmt.Errorf("get %q: %w", key, storage.ErrNotFound)
	}
	return toKeyValue(resp.Kvs[0]), nil
}

// Create stores the key if it is absent and returns the new store revision, or
// storage.ErrExists.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	if s.local != nil {
		if err := s.localClosed(); err != nil {
			return 0, fmt.Errorf("create %q: %w", key, err)
		}
		k := []byte(key)
		resp, err := s.local.Txn(ctx, &pb.TxnRequest{
			Compare: []*pb.Compare{{Result: pb.Compare_EQUAL, Target: pb.Compare_CREATE, Key: k,
				TargetUnion: &pb.Compare_CreateRevision{}}},
			Success: []*pb.RequestOp{putOp(k, value)},
		})
		if err != nil {
			return 0, fmt.Errorf("create %q: %w", key, mapError(clientv3.ContextError(ctx, err)))
		}
		if !resp.Succeeded {
			return 0, fmt.Errorf("create %q: %w", key, storage.ErrExists)
		}
		return resp.Header.Revision, nil
	}
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, bytesString(value))).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("create %q: %w", key, mapError(err))
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("create %q: %w", key, storage.ErrExists)
	}
	return resp.Header.Revision, nil
}

// Update replaces the key if its mod revision equals expected and returns the new
// store revision; storage.ErrConflict on mismatch, storage.ErrNotFound if the key
// is absent. An expected of 0 replaces the key whatever its mod revision, as long
// as it exists.
func (s *Store) Update(ctx context.Context, key string, value []byte, expected int64) (int64, error) {
	if s.local != nil {
		if err := s.localClosed(); err != nil {
			return 0, fmt.Errorf("update %q: %w", key, err)
		}
		k := []byte(key)
		cmp := &pb.Compare{Result: pb.Compare_EQUAL, Target: pb.Compare_MOD, Key: k,
			TargetUnion: &pb.Compare_ModRevision{ModRevision: expected}}
		if expected == 0 {
			cmp = &pb.Compare{Result: pb.Compare_GREATER, Target: pb.Compare_CREATE, Key: k,
				TargetUnion: &pb.Compare_CreateRevision{}}
		}
		resp, err := s.local.Txn(ctx, &pb.TxnRequest{
			Compare: []*pb.Compare{cmp},
			Success: []*pb.RequestOp{putOp(k, value)},
			Failure: []*pb.RequestOp{{Request: &pb.RequestOp_RequestRange{
				RequestRange: &pb.RangeRequest{Key: k, KeysOnly: true}}}},
		})
		if err != nil {
			return 0, fmt.Errorf("update %q: %w", key, mapError(clientv3.ContextError(ctx, err)))
		}
		if !resp.Succeeded {
			return 0, fmt.Errorf("update %q: %w", key, preconditionFailure((*clientv3.TxnResponse)(resp), expected))
		}
		return resp.Header.Revision, nil
	}
	cmp := clientv3.Compare(clientv3.ModRevision(key), "=", expected)
	if expected == 0 {
		cmp = clientv3.Compare(clientv3.CreateRevision(key), ">", 0)
	}
	resp, err := s.client.Txn(ctx).
		If(cmp).
		Then(clientv3.OpPut(key, bytesString(value))).
		Else(clientv3.OpGet(key, clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("update %q: %w", key, mapError(err))
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("update %q: %w", key, preconditionFailure(resp, expected))
	}
	return resp.Header.Revision, nil
}

// Delete removes the key if its mod revision equals expected (0: any) and returns
// the deleted value and the deletion revision; storage.ErrConflict on mismatch,
// storage.ErrNotFound if the key is absent.
func (s *Store) Delete(ctx context.Context, key string, expected int64) (storage.KeyValue, int64, error) {
	txn := s.client.Txn(ctx)
	if expected != 0 {
		txn = txn.If(clientv3.Compare(clientv3.ModRevision(key), "=", expected))
	}
	txn = txn.Then(clientv3.OpDelete(key, clientv3.WithPrevKV()))
	if expected != 0 {
		txn = txn.Else(clientv3.OpGet(key, clientv3.WithKeysOnly()))
	}
	resp, err := txn.Commit()
	if err != nil {
		return storage.KeyValue{}, 0, fmt.Errorf("delete %q: %w", key, mapError(err))
	}
	if !resp.Succeeded {
		return storage.KeyValue{}, 0, fmt.Errorf("delete %q: %w", key, preconditionFailure(resp, expected))
	}
	del := resp.Responses[0].GetResponseDeleteRange()
	if del == nil || len(del.PrevKvs) == 0 {
		return storage.KeyValue{}, 0, fmt.Errorf("delete %q: %w", key, storage.ErrNotFound)
	}
	return toKeyValue(del.PrevKvs[0]), resp.Header.Revision, nil
}

// localClosed is the error of a write through the server's KV service once
// the in-process client is closed: the embedded server closes that client
// first when it stops, which ended every write through it, and writes that
// went on straight to the server while it closed its backend made its watch
// streams read a closed backend (a nil bbolt transaction: the process
// crashed). Nil while the client is open.
func (s *Store) localClosed() error {
	if err := s.client.Ctx().Err(); err != nil {
		return fmt.Errorf("etcd client closed: %w", err)
	}
	return nil
}

// putOp is a transaction's put of value at key, value not copied: etcd
// encodes the request into its raft log before Txn returns and keeps nothing
// of it, and storage.Interface does not let callers change value during a
// call.
func putOp(key, value []byte) *pb.RequestOp {
	return &pb.RequestOp{Request: &pb.RequestOp_RequestPut{RequestPut: &pb.PutRequest{Key: key, Value: value}}}
}

// bytesString views value as a string without copying it: the client copies
// it into the request (OpPut's value becomes the protobuf's []byte), and
// storage.Interface does not let callers change value during a call.
func bytesString(value []byte) string {
	return unsafe.String(unsafe.SliceData(value), len(value))
}

// preconditionFailure explains a failed compare from the Else branch's Get:
// the key is absent (ErrNotFound) or at another revision (ErrConflict).
func preconditionFailure(resp *clientv3.TxnResponse, expected int64) error {
	if len(resp.Responses) > 0 {
		if rng := resp.Responses[0].GetResponseRange(); rng != nil && len(rng.Kvs) > 0 {
			return fmt.Errorf("%w: expected mod revision %d, found %d",
				storage.ErrConflict, expected, rng.Kvs[0].ModRevision)
		}
	}
	return storage.ErrNotFound
}

// List returns the keys under prefix in key order, read at one snapshot:
// opts.Revision, or the latest revision when it is 0.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	start := prefix
	if opts.StartKey > start {
		start = opts.StartKey
	}
	end := clientv3.GetPrefixRangeEnd(prefix)
	if start == "" {
		// etcd refuses an empty key; "\x00" is the smallest key it accepts.
		start = "\x00"
	}
	ops := []clientv3.OpOption{clientv3.WithRange(end)}
	if opts.Revision > 0 {
		ops = append(ops, clientv3.WithRev(opts.Revision))
	}
	if opts.Limit > 0 {
		ops = append(ops, clientv3.WithLimit(opts.Limit))
	}
	if end != "\x00" && start >= end {
		// StartKey is past the prefix: nothing to read, but still report the
		// revision, and fail a compacted or future one like a real read would.
		ops = append(ops, clientv3.WithCountOnly())
	}
	resp, err := s.client.Get(ctx, start, ops...)
	if err != nil {
		return storage.ListResult{}, fmt.Errorf("list %q at revision %d: %w", prefix, opts.Revision, mapError(err))
	}
	res := storage.ListResult{Revision: opts.Revision}
	if res.Revision == 0 {
		res.Revision = resp.Header.Revision
	}
	if end != "\x00" && start >= end {
		return res, nil
	}
	res.Items = make([]storage.KeyValue, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		res.Items = append(res.Items, toKeyValue(kv))
	}
	res.More = resp.More
	if res.More {
		// Count is the number of keys in the whole range, ignoring the limit.
		res.Remaining = resp.Count - int64(len(resp.Kvs))
	}
	return res, nil
}

// Count returns the number of keys under prefix.
func (s *Store) Count(ctx context.Context, prefix string) (int64, error) {
	key, end := prefix, clientv3.GetPrefixRangeEnd(prefix)
	if key == "" {
		key = "\x00"
	}
	resp, err := s.client.Get(ctx, key, clientv3.WithRange(end), clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("count %q: %w", prefix, mapError(err))
	}
	return resp.Count, nil
}

// CurrentRevision returns the latest store revision.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	resp, err := s.client.Get(ctx, revisionProbeKey, clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("read current revision: %w", mapError(err))
	}
	return resp.Header.Revision, nil
}

// Compact discards history before revision. Compacting at or below the current
// compaction point fails with storage.ErrCompacted, beyond the store's revision
// with storage.ErrFutureRevision.
func (s *Store) Compact(ctx context.Context, revision int64) error {
	if _, err := s.client.Compact(ctx, revision); err != nil {
		return fmt.Errorf("compact to revision %d: %w", revision, mapError(err))
	}
	return nil
}

// mapError turns etcd's answers that have a storage meaning into the storage
// sentinels and leaves other errors as they are.
func mapError(err error) error {
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("%w (%v)", storage.ErrCompacted, err)
	case errors.Is(err, rpctypes.ErrFutureRev):
		return fmt.Errorf("%w (%v)", storage.ErrFutureRevision, err)
	}
	return err
}

func toKeyValue(kv *mvccpb.KeyValue) storage.KeyValue {
	return storage.KeyValue{
		Key:            string(kv.Key),
		Value:          kv.Value,
		CreateRevision: kv.CreateRevision,
		ModRevision:    kv.ModRevision,
	}
}
