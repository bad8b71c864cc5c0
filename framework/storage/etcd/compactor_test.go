package etcd

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/converge-dev/converge/framework/storage"
)

func TestRunCompactorInvalidInterval(t *testing.T) {
	t.Parallel()
	if err := RunCompactor(t.Context(), shared.Client(), 0, logr.Discard()); err == nil {
		t.Fatal("RunCompactor accepted a zero interval")
	}
}

// TestRunCompactorShared runs two compactors against one cluster, as two API
// servers would: history gets compacted, and the compaction clock advances about
// once per interval, not once per compactor.
func TestRunCompactorShared(t *testing.T) {
	t.Parallel()
	e := startTestServer(t)
	s := New(e.Client())
	ctx := t.Context()
	first, err := s.Create(ctx, "/compact/a", []byte("v0"))
	if err != nil {
		t.Fatal(err)
	}

	const interval = 200 * time.Millisecond
	cctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	started := time.Now()
	for i := range errs {
		wg.Go(func() { errs[i] = RunCompactor(cctx, e.Client(), interval, logr.Discard()) })
	}

	// Keep writing so every tick observes a new revision.
	rev := first
	deadline := time.Now().Add(10 * time.Second)
	for {
		if rev, err = s.Update(ctx, "/compact/a", []byte("v"), rev); err != nil {
			t.Fatalf("Update: %v", err)
		}
		_, err := s.List(ctx, "/compact/", storage.ListOptions{Revision: first})
		if errors.Is(err, storage.ErrCompacted) {
			break
		}
		if err != nil {
			t.Fatalf("List at %d: %v", first, err)
		}
		if time.Now().After(deadline) {
			t.Fatal("history not compacted within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Revisions written within the last interval are still readable.
	if _, err := s.List(ctx, "/compact/", storage.ListOptions{Revision: rev}); err != nil {
		t.Fatalf("List at the latest revision %d after compaction: %v", rev, err)
	}
	time.Sleep(3 * interval)
	cancel()
	wg.Wait()
	elapsed := time.Since(started)
	for i, err := range errs {
		if err != nil {
			t.Errorf("compactor %d returned %v", i, err)
		}
	}

	resp, err := e.Client().Get(ctx, CompactRevKey)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("Get %s = %v, %v", CompactRevKey, resp, err)
	}
	ticks := int64(elapsed/interval) + 1
	if v := resp.Kvs[0].Version; v < 2 || v > ticks+1 {
		t.Fatalf("compaction clock at %d after %d ticks of two compactors, want about one step per tick", v, ticks)
	}
	t.Logf("compaction clock %d after %d ticks, compacted to %s", resp.Kvs[0].Version, ticks, resp.Kvs[0].Value)
}

// TestCompactRoundLoser checks the compare-and-swap protocol directly: a
// compactor with a stale clock does not compact and adopts the current clock.
func TestCompactRoundLoser(t *testing.T) {
	t.Parallel()
	e := startTestServer(t)
	c := e.Client()
	ctx := t.Context()
	log := logr.Discard()
	rev, err := New(c).Create(ctx, "/round/a", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	// First round: no revision observed yet, so only the clock advances.
	clock, seen, err := compactRound(ctx, c, time.Second, 0, 0, log)
	if err != nil || clock != 1 || seen <= rev {
		t.Fatalf("round 1 = %d, %d, %v", clock, seen, err)
	}
	// A stale compactor (clock 0) loses, compacts nothing, learns clock 1.
	lclock, _, err := compactRound(ctx, c, time.Second, 0, seen, log)
	if err != nil || lclock != 1 {
		t.Fatalf("losing round = %d, %v", lclock, err)
	}
	if _, err := c.Get(ctx, "/round/a", clientv3.WithRev(rev)); err != nil {
		t.Fatalf("the losing round compacted: %v", err)
	}
	// The winner compacts to what it saw last round.
	clock, _, err = compactRound(ctx, c, time.Second, clock, seen, log)
	if err != nil || clock != 2 {
		t.Fatalf("round 2 = %d, %v", clock, err)
	}
	if _, err := New(c).List(ctx, "/round/", storage.ListOptions{Revision: rev}); !errors.Is(err, storage.ErrCompacted) {
		t.Fatalf("List at %d after the winning round: %v", rev, err)
	}
	// Compacting again to the same revision is tolerated.
	if _, _, err := compactRound(ctx, c, time.Second, clock, seen, log); err != nil {
		t.Fatalf("round at an already compacted revision: %v", err)
	}
}
