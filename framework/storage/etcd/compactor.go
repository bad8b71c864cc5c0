package etcd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/converge-dev/converge/framework/storage"
)

// CompactRevKey is the key through which compactors sharing a cluster agree who
// compacts: its version is a logical clock advanced once per interval by
// whichever compactor wins the compare-and-swap, its value the revision that
// compactor compacted to. kube-apiserver uses the same key and protocol, so the
// two can share a cluster.
const CompactRevKey = "compact_rev_key"

// minCompactTimeout bounds each round's etcd calls when the interval is short.
const minCompactTimeout = 10 * time.Second

// RunCompactor compacts the cluster every interval down to the revision observed
// one interval earlier, so one interval of history stays available to watches
// and paginated lists. It blocks until ctx ends and then returns nil. Several
// compactors (one per API server) may run against one cluster: each round only
// the one whose compare-and-swap on CompactRevKey succeeds compacts, the others
// learn the new clock and revision. Failed rounds are logged and retried on the
// next tick; "already compacted" is not a failure.
func RunCompactor(ctx context.Context, client *clientv3.Client, interval time.Duration, log logr.Logger) error {
	if interval <= 0 {
		return fmt.Errorf("run compactor: interval %s must be positive", interval)
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var clock, rev int64
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		var err error
		clock, rev, err = compactRound(ctx, client, max(interval, minCompactTimeout), clock, rev, log)
		if err != nil && ctx.Err() == nil {
			log.Error(err, "etcd compaction failed", "endpoints", client.Endpoints())
		}
	}
}

// compactRound runs one round: if CompactRevKey's version still equals clock,
// this compactor wins, records rev and compacts to it (rev 0 means nothing was
// observed yet: only the clock advances). Either way it returns the new clock and
// the store revision observed now, to compact to next round.
func compactRound(ctx context.Context, client *clientv3.Client, timeout time.Duration, clock, rev int64, log logr.Logger) (int64, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := client.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(CompactRevKey), "=", clock)).
		Then(clientv3.OpPut(CompactRevKey, strconv.FormatInt(rev, 10))).
		Else(clientv3.OpGet(CompactRevKey)).
		Commit()
	if err != nil {
		return clock, rev, fmt.Errorf("advance compaction clock: %w", err)
	}
	now := resp.Header.Revision
	if !resp.Succeeded {
		// Another compactor won this round (or ours is behind): adopt its clock.
		var theirs int64
		if rng := resp.Responses[0].GetResponseRange(); rng != nil && len(rng.Kvs) > 0 {
			theirs = rng.Kvs[0].Version
		}
		return theirs, now, nil
	}
	clock++
	if rev == 0 {
		return clock, now, nil
	}
	if _, err := client.Compact(ctx, rev); err != nil {
		if errors.Is(mapError(err), storage.ErrCompacted) {
			log.V(1).Info("etcd already compacted", "revision", rev)
			return clock, now, nil
		}
		return clock, now, fmt.Errorf("compact to revision %d: %w", rev, err)
	}
	log.V(1).Info("etcd compacted", "revision", rev)
	return clock, now, nil
}
