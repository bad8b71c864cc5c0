package etcd

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
)

// The product pins etcd v3.6, and bench/ (whose Kubernetes modules require
// etcd v3.7) builds this package against v3.7, where three of the mvcc calls
// localWatches makes changed shape: WatchStream.Watch takes a context, and
// watch responses and range results hold pointers. These helpers compile
// against both and pick the shape at run time.

// watchAll starts the watch of [key, end) from startRev on ws.
func watchAll(ctx context.Context, ws mvcc.WatchStream, key, end []byte, startRev int64) error {
	const auto = mvcc.WatchID(0) // clientv3.AutoWatchID: etcd picks the ID
	switch w := any(ws).(type) {
	case interface {
		Watch(context.Context, mvcc.WatchID, []byte, []byte, int64, ...mvcc.FilterFunc) (mvcc.WatchID, error)
	}: // v3.7
		_, err := w.Watch(ctx, auto, key, end, startRev)
		return err
	case interface {
		Watch(mvcc.WatchID, []byte, []byte, int64, ...mvcc.FilterFunc) (mvcc.WatchID, error)
	}: // v3.6
		_, err := w.Watch(auto, key, end, startRev)
		return err
	}
	return fmt.Errorf("etcd watch stream %T has no known Watch method", ws)
}

// eachEvent calls fn on each of a watch response's events (a v3.6
// []mvccpb.Event or a v3.7 []*mvccpb.Event) until fn returns false.
func eachEvent(events any, fn func(*mvccpb.Event) bool) {
	switch evs := events.(type) {
	case []*mvccpb.Event:
		for _, ev := range evs {
			if !fn(ev) {
				return
			}
		}
	case []mvccpb.Event:
		for i := range evs {
			if !fn(&evs[i]) {
				return
			}
		}
	}
}

// firstKV is a range result's first key (v3.6 []mvccpb.KeyValue, v3.7
// []*mvccpb.KeyValue), nil when there is none.
func firstKV(kvs any) *mvccpb.KeyValue {
	switch kvs := kvs.(type) {
	case []*mvccpb.KeyValue:
		if len(kvs) > 0 {
			return kvs[0]
		}
	case []mvccpb.KeyValue:
		if len(kvs) > 0 {
			return &kvs[0]
		}
	}
	return nil
}
