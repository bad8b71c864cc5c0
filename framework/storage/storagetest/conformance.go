package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/storage"
)

// eventTimeout bounds the wait for one watch event.
const eventTimeout = 10 * time.Second

// prefixSeq makes prefixes unique within one test binary; the start time makes
// them unique across binaries sharing a backend.
var prefixSeq atomic.Int64

// RunConformance runs the storage contract suite against the stores newStore
// returns. newStore is called once per subtest; it may return the same store
// every time, and should register its own cleanup with t.Cleanup.
func RunConformance(t *testing.T, newStore func(t *testing.T) storage.Interface) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, s storage.Interface, p string)
	}{
		{"CreateGet", testCreateGet},
		{"UpdateCAS", testUpdateCAS},
		{"UpdateMissing", testUpdateMissing},
		{"DeleteUnconditional", testDeleteUnconditional},
		{"DeletePrecondition", testDeletePrecondition},
		{"DeleteMissing", testDeleteMissing},
		{"ListConsistentAcrossPages", testListConsistent},
		{"ListPagination", testListPagination},
		{"ListPrefixBoundary", testListPrefixBoundary},
		{"ListFutureRevision", testListFutureRevision},
		{"Count", testCount},
		{"CurrentRevision", testCurrentRevision},
		{"WatchFromNow", testWatchFromNow},
		{"WatchReplay", testWatchReplay},
		{"WatchCancel", testWatchCancel},
		{"WatchProgress", testWatchProgress},
	}
	t.Run("group", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				c.run(t, newStore(t), uniquePrefix(t))
			})
		}
	})
	// These compact the whole store: run them alone, after the others.
	t.Run("ListCompacted", func(t *testing.T) { testListCompacted(t, newStore(t), uniquePrefix(t)) })
	t.Run("WatchCompacted", func(t *testing.T) { testWatchCompacted(t, newStore(t), uniquePrefix(t)) })
}

func uniquePrefix(t *testing.T) string {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	return fmt.Sprintf("/conformance/%d-%d/%s/", time.Now().UnixNano(), prefixSeq.Add(1), name)
}

// --- CRUD ---

func testCreateGet(t *testing.T, s storage.Interface, p string) {
	ctx := t.Context()
	key := p + "a"
	rev := mustCreate(t, s, key, "v1")
	kv, err := s.Get(ctx, key)
	if err != nil {
		t.Fatalf("Get after Create: %v", err)
	}
	wantKV(t, kv, key, "v1", rev, rev)

	if _, err := s.Create(ctx, key, []byte("v2")); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("second Create: got %v, want ErrExists", err)
	}
	if kv, _ := s.Get(ctx, key); string(kv.Value) != "v1" {
		t.Fatalf("failed Create changed the value to %q", kv.Value)
	}
	if _, err := s.Get(ctx, p+"missing"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get of a missing key: got %v, want ErrNotFound", err)
	}
	rev2 := mustCreate(t, s, p+"b", "v")
	if rev2 <= rev {
		t.Fatalf("second Create revision %d not after first %d", rev2, rev)
	}
}

func testUpdateCAS(t *testing.T, s storage.Interface, p string) {
	ctx := t.Context()
	key := p + "a"
	rev1 := mustCreate(t, s, key, "v1")
	rev2, err := s.Update(ctx, key, []byte("v2"), rev1)
	if err != nil {
		t.Fatalf("Update at the current revision: %v", err)
	}
	if rev2 <= rev1 {
		t.Fatalf("Update revision %d not after %d", rev2, rev1)
	}
	kv, err := s.Get(ctx, key)
	if err != nil {
		t.Fatalf("Get after Update: %v", err)
	}
	wantKV(t, kv, key, "v2", rev1, rev2)

	if _, err := s.Update(ctx, key, []byte("stale"), rev1); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("Update at a stale revision: got %v, want ErrConflict", err)
	}
	kv, _ = s.Get(ctx, key)
	wantKV(t, kv, key, "v2", rev1, rev2)
}

func testUpdateMissing(t *testing.T, s storage.Interface, p string) {
	rev := mustCreate(t, s, p+"other", "x")
	if _, err := s.Update(t.Context(), p+"missing", []byte("v"), rev); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Update of a missing key: got %v, want ErrNotFound", err)
	}
	if _, err := s.Get(t.Context(), p+"missing"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("failed Update created the key: Get returned %v", err)
	}
}

func testDeleteUnconditional(t *testing.T, s storage.Interface, p string) {
	ctx := t.Context()
	key := p + "a"
	rev := mustCreate(t, s, key, "v1")
	kv, delRev, err := s.Delete(ctx, key, 0)
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantKV(t, kv, key, "v1", rev, rev)
	if delRev <= rev {
		t.Fatalf("deletion revision %d not after creation %d", delRev, rev)
	}
	if cur := mustRev(t, s); cur < delRev {
		t.Fatalf("current revision %d before deletion revision %d", cur, delRev)
	}
	if _, err := s.Get(ctx, key); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get after Delete: got %v, want ErrNotFound", err)
	}
	if _, _, err := s.Delete(ctx, key, 0); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second Delete: got %v, want ErrNotFound", err)
	}
}

func testDeletePrecondition(t *testing.T, s storage.Interface, p string) {
	ctx := t.Context()
	key := p + "a"
	rev1 := mustCreate(t, s, key, "v1")
	rev2 := mustUpdate(t, s, key, "v2", rev1)
	if _, _, err := s.Delete(ctx, key, rev1); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("Delete at a stale revision: got %v, want ErrConflict", err)
	}
	if _, err := s.Get(ctx, key); err != nil {
		t.Fatalf("failed Delete removed the key: %v", err)
	}
	kv, delRev, err := s.Delete(ctx, key, rev2)
	if err != nil {
		t.Fatalf("Delete at the current revision: %v", err)
	}
	wantKV(t, kv, key, "v2", rev1, rev2)
	if delRev <= rev2 {
		t.Fatalf("deletion revision %d not after %d", delRev, rev2)
	}
}

func testDeleteMissing(t *testing.T, s storage.Interface, p string) {
	rev := mustCreate(t, s, p+"other", "x")
	if _, _, err := s.Delete(t.Context(), p+"missing", rev); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Delete of a missing key with a precondition: got %v, want ErrNotFound", err)
	}
}

// --- List and Count ---

func testListConsistent(t *testing.T, s storage.Interface, p string) {
	ctx := t.Context()
	revs := map[string]int64{}
	for _, k := range []string{"a", "c", "e", "g", "i"} {
		revs[k] = mustCreate(t, s, p+k, "old-"+k)
	}
	page1, err := s.List(ctx, p, storage.ListOptions{Limit: 2})
	if err != nil {
		t.Fatalf("List page 1: %v", err)
	}
	wantKeys(t, page1, p, "a", "c")
	wantMore(t, page1, true, 3)
	snap := page1.Revision
	if snap < revs["i"] {
		t.Fatalf("list revision %d before the last write %d", snap, revs["i"])
	}

	// Change the store after the first page: new keys before and inside the
	// remaining range, an update and a delete of keys still to be listed.
	mustCreate(t, s, p+"b", "new")
	mustCreate(t, s, p+"d", "new")
	mustCreate(t, s, p+"z", "new")
	mustUpdate(t, s, p+"e", "new-e", revs["e"])
	if _, _, err := s.Delete(ctx, p+"g", 0); err != nil {
		t.Fatalf("Delete: %v", err)
	}

	page2, err := s.List(ctx, p, storage.ListOptions{Revision: snap, Limit: 2, StartKey: next(page1)})
	if err != nil {
		t.Fatalf("List page 2 at revision %d: %v", snap, err)
	}
	if page2.Revision != snap {
		t.Fatalf("page 2 revision = %d, want %d", page2.Revision, snap)
	}
	wantKeys(t, page2, p, "e", "g")
	wantMore(t, page2, true, 1)
	if v := string(page2.Items[0].Value); v != "old-e" {
		t.Fatalf("page 2 sees %q for e, want the value at revision %d", v, snap)
	}
	wantKV(t, page2.Items[0], p+"e", "old-e", revs["e"], revs["e"])

	page3, err := s.List(ctx, p, storage.ListOptions{Revision: snap, Limit: 2, StartKey: next(page2)})
	if err != nil {
		t.Fatalf("List page 3: %v", err)
	}
	wantKeys(t, page3, p, "i")
	wantMore(t, page3, false, 0)

	latest, err := s.List(ctx, p, storage.ListOptions{})
	if err != nil {
		t.Fatalf("List latest: %v", err)
	}
	wantKeys(t, latest, p, "a", "b", "c", "d", "e", "i", "z")
	wantMore(t, latest, false, 0)
	if latest.Revision <= snap {
		t.Fatalf("latest list revision %d not after snapshot %d", latest.Revision, snap)
	}
}

func testListPagination(t *testing.T, s storage.Interface, p string) {
	ctx := t.Context()
	var want []string
	for i := range 10 {
		k := fmt.Sprintf("k%02d", i)
		want = append(want, k)
		mustCreate(t, s, p+k, k)
	}
	var got []string
	opts := storage.ListOptions{Limit: 3}
	for page := 0; ; page++ {
		res, err := s.List(ctx, p, opts)
		if err != nil {
			t.Fatalf("List page %d: %v", page, err)
		}
		if opts.Revision == 0 {
			opts.Revision = res.Revision
		}
		if int64(len(res.Items)) > opts.Limit {
			t.Fatalf("page %d has %d items, limit %d", page, len(res.Items), opts.Limit)
		}
		for _, kv := range res.Items {
			got = append(got, strings.TrimPrefix(kv.Key, p))
			if string(kv.Value) != strings.TrimPrefix(kv.Key, p) {
				t.Fatalf("key %s has value %q", kv.Key, kv.Value)
			}
		}
		left := int64(len(want) - len(got))
		wantMore(t, res, left > 0, left)
		if !res.More {
			break
		}
		if page > 10 {
			t.Fatal("pagination does not end")
		}
		opts.StartKey = next(res)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("paginated keys = %v, want %v", got, want)
	}

	all, err := s.List(ctx, p, storage.ListOptions{})
	if err != nil {
		t.Fatalf("List without limit: %v", err)
	}
	wantKeys(t, all, p, want...)
	wantMore(t, all, false, 0)

	exact, err := s.List(ctx, p, storage.ListOptions{Limit: 10})
	if err != nil {
		t.Fatalf("List with limit = size: %v", err)
	}
	wantKeys(t, exact, p, want...)
	wantMore(t, exact, false, 0)

	empty, err := s.List(ctx, p+"nothing/", storage.ListOptions{Limit: 5})
	if err != nil {
		t.Fatalf("List of an empty prefix: %v", err)
	}
	wantKeys(t, empty, p+"nothing/")
	wantMore(t, empty, false, 0)
	if empty.Revision == 0 {
		t.Fatal("List of an empty prefix has revision 0")
	}
}

func testListPrefixBoundary(t *testing.T, s storage.Interface, p string) {
	ctx := t.Context()
	mustCreate(t, s, p+"a/1", "in")
	mustCreate(t, s, p+"a/2", "in")
	mustCreate(t, s, p+"a", "out")
	mustCreate(t, s, p+"ab", "out")
	mustCreate(t, s, p+"a0", "out")
	res, err := s.List(ctx, p+"a/", storage.ListOptions{})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	wantKeys(t, res, p+"a/", "1", "2")
	// A StartKey past the prefix yields nothing.
	res, err = s.List(ctx, p+"a/", storage.ListOptions{StartKey: p + "b"})
	if err != nil {
		t.Fatalf("List with StartKey past the prefix: %v", err)
	}
	wantKeys(t, res, p+"a/")
	wantMore(t, res, false, 0)
}

func testListFutureRevision(t *testing.T, s storage.Interface, p string) {
	mustCreate(t, s, p+"a", "v")
	cur := mustRev(t, s)
	_, err := s.List(t.Context(), p, storage.ListOptions{Revision: cur + 1_000_000})
	if !errors.Is(err, storage.ErrFutureRevision) {
		t.Fatalf("List at a future revision: got %v, want ErrFutureRevision", err)
	}
}

func testCount(t *testing.T, s storage.Interface, p string) {
	ctx := t.Context()
	if n, err := s.Count(ctx, p+"x/"); err != nil || n != 0 {
		t.Fatalf("Count of an empty prefix = %d, %v; want 0", n, err)
	}
	for _, k := range []string{"x/1", "x/2", "x/3", "y/1", "x"} {
		mustCreate(t, s, p+k, "v")
	}
	if n, err := s.Count(ctx, p+"x/"); err != nil || n != 3 {
		t.Fatalf("Count = %d, %v; want 3", n, err)
	}
	if _, _, err := s.Delete(ctx, p+"x/2", 0); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if n, err := s.Count(ctx, p+"x/"); err != nil || n != 2 {
		t.Fatalf("Count after Delete = %d, %v; want 2", n, err)
	}
}

func testCurrentRevision(t *testing.T, s storage.Interface, p string) {
	before := mustRev(t, s)
	rev := mustCreate(t, s, p+"a", "v")
	if rev <= before {
		t.Fatalf("Create revision %d not after current revision %d", rev, before)
	}
	if after := mustRev(t, s); after < rev {
		t.Fatalf("current revision %d before the last write %d", after, rev)
	}
}

// --- Watch ---

func testWatchFromNow(t *testing.T, s storage.Interface, p string) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pre := mustCreate(t, s, p+"w/before", "old")
	w := s.Watch(ctx, p+"w/", 0)

	r1 := mustCreate(t, s, p+"w/a", "v1")
	mustCreate(t, s, p+"outside", "x")
	r2 := mustUpdate(t, s, p+"w/a", "v2", r1)
	r3 := mustUpdate(t, s, p+"w/before", "new", pre)
	_, r4, err := s.Delete(ctx, p+"w/a", 0)
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}

	e := nextEvent(t, w)
	wantEvent(t, e, storage.EventPut, p+"w/a", "v1", r1)
	if e.Prev != nil {
		t.Fatalf("create event has Prev %+v", *e.Prev)
	}
	e = nextEvent(t, w)
	wantEvent(t, e, storage.EventPut, p+"w/a", "v2", r2)
	wantPrev(t, e, "v1", r1)
	e = nextEvent(t, w)
	wantEvent(t, e, storage.EventPut, p+"w/before", "new", r3)
	wantPrev(t, e, "old", pre)
	e = nextEvent(t, w)
	wantEvent(t, e, storage.EventDelete, p+"w/a", "", r4)
	wantPrev(t, e, "v2", r2)

	cancel()
	drainClosed(t, w)
}

// testWatchProgress: on a store that reports watch progress, a watch made
// with WithProgressEvents receives, after RequestProgress, an EventProgress
// at a revision at least the store's current one once every earlier change
// under its prefix was delivered; a watch made without it gets none.
func testWatchProgress(t *testing.T, s storage.Interface, p string) {
	pr, ok := s.(storage.ProgressRequester)
	if !ok {
		t.Skipf("%T does not report watch progress (storage.ProgressRequester is optional)", s)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	plain := s.Watch(ctx, p+"w/", 0)
	w := s.Watch(storage.WithProgressEvents(ctx), p+"w/", 0)
	r1 := mustCreate(t, s, p+"w/a", "v1")
	outside := mustCreate(t, s, p+"outside", "x")
	wantEvent(t, nextEvent(t, w), storage.EventPut, p+"w/a", "v1", r1)
	wantEvent(t, nextEvent(t, plain), storage.EventPut, p+"w/a", "v1", r1)
	// A watch may still be catching up when asked (etcd answers only a
	// watch in sync): ask until the answer comes.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := pr.RequestProgress(ctx); err != nil {
			t.Fatalf("RequestProgress: %v", err)
		}
		select {
		case e, ok := <-w:
			if !ok || e.Err != nil {
				t.Fatalf("watch ended: %+v", e)
			}
			if e.Type != storage.EventProgress {
				t.Fatalf("got %+v, want a progress event", e)
			}
			if e.KV.ModRevision < outside {
				t.Fatalf("progress at revision %d, want at least %d (the last write)", e.KV.ModRevision, outside)
			}
			r2 := mustUpdate(t, s, p+"w/a", "v2", r1)
			if e := nextEvent(t, plain); e.Type != storage.EventPut || e.KV.ModRevision != r2 {
				t.Fatalf("watch without WithProgressEvents got %+v, want the update at %d", e, r2)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no progress event within 10s of RequestProgress")
		}
	}
}

func testWatchReplay(t *testing.T, s storage.Interface, p string) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	start := mustRev(t, s)
	r1 := mustCreate(t, s, p+"a", "v1")
	r2 := mustUpdate(t, s, p+"a", "v2", r1)
	r3 := mustCreate(t, s, p+"b", "b1")
	_, r4, err := s.Delete(ctx, p+"a", r2)
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}

	w := s.Watch(ctx, p, start)
	e := nextEvent(t, w)
	wantEvent(t, e, storage.EventPut, p+"a", "v1", r1)
	if e.Prev != nil {
		t.Fatalf("replayed create event has Prev %+v", *e.Prev)
	}
	e = nextEvent(t, w)
	wantEvent(t, e, storage.EventPut, p+"a", "v2", r2)
	wantPrev(t, e, "v1", r1)
	wantEvent(t, nextEvent(t, w), storage.EventPut, p+"b", "b1", r3)
	e = nextEvent(t, w)
	wantEvent(t, e, storage.EventDelete, p+"a", "", r4)
	wantPrev(t, e, "v2", r2)

	// History continues into live events.
	r5 := mustCreate(t, s, p+"c", "c1")
	wantEvent(t, nextEvent(t, w), storage.EventPut, p+"c", "c1", r5)

	// A watch from the middle of history starts after that revision.
	w2 := s.Watch(ctx, p, r2)
	wantEvent(t, nextEvent(t, w2), storage.EventPut, p+"b", "b1", r3)
	wantEvent(t, nextEvent(t, w2), storage.EventDelete, p+"a", "", r4)
	wantEvent(t, nextEvent(t, w2), storage.EventPut, p+"c", "c1", r5)

	cancel()
	drainClosed(t, w)
	drainClosed(t, w2)
}

func testWatchCancel(t *testing.T, s storage.Interface, p string) {
	ctx, cancel := context.WithCancel(t.Context())
	w := s.Watch(ctx, p, 0)
	mustCreate(t, s, p+"a", "v")
	wantEvent(t, nextEvent(t, w), storage.EventPut, p+"a", "v", 0)
	// Pending events must not keep the watch alive after cancellation.
	for i := range 5 {
		mustCreate(t, s, fmt.Sprintf("%sb%d", p, i), "v")
	}
	cancel()
	drainClosed(t, w)

	// A watch whose context is already done closes too.
	w = s.Watch(ctx, p, 0)
	drainClosed(t, w)
}

// --- Compaction ---

func testListCompacted(t *testing.T, s storage.Interface, p string) {
	ctx := t.Context()
	r1 := mustCreate(t, s, p+"a", "v1")
	mustCreate(t, s, p+"b", "v1")
	if _, err := s.List(ctx, p, storage.ListOptions{Revision: r1}); err != nil {
		t.Fatalf("List at revision %d before compaction: %v", r1, err)
	}
	r2 := mustUpdate(t, s, p+"a", "v2", r1)
	if err := s.Compact(ctx, r2); err != nil {
		t.Fatalf("Compact(%d): %v", r2, err)
	}
	if _, err := s.List(ctx, p, storage.ListOptions{Revision: r1}); !errors.Is(err, storage.ErrCompacted) {
		t.Fatalf("List at compacted revision %d: got %v, want ErrCompacted", r1, err)
	}
	res, err := s.List(ctx, p, storage.ListOptions{Revision: r2})
	if err != nil {
		t.Fatalf("List at the compaction revision %d: %v", r2, err)
	}
	wantKeys(t, res, p, "a", "b")
	if _, err := s.List(ctx, p, storage.ListOptions{}); err != nil {
		t.Fatalf("List latest after compaction: %v", err)
	}
	if _, err := s.Get(ctx, p+"a"); err != nil {
		t.Fatalf("Get after compaction: %v", err)
	}
}

func testWatchCompacted(t *testing.T, s storage.Interface, p string) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r1 := mustCreate(t, s, p+"a", "v1")
	mustUpdate(t, s, p+"a", "v2", r1)
	r3 := mustCreate(t, s, p+"b", "v")
	if err := s.Compact(ctx, r3); err != nil {
		t.Fatalf("Compact(%d): %v", r3, err)
	}
	w := s.Watch(ctx, p, r1)
	e := nextEvent(t, w)
	if !errors.Is(e.Err, storage.ErrCompacted) {
		t.Fatalf("first event of a watch from compacted revision %d = %+v, want Err ErrCompacted", r1, e)
	}
	select {
	case e, ok := <-w:
		if ok {
			t.Fatalf("event after the final error: %+v", e)
		}
	case <-time.After(eventTimeout):
		t.Fatal("watch channel not closed after the final error")
	}
}

// --- helpers ---

func mustCreate(t *testing.T, s storage.Interface, key, value string) int64 {
	t.Helper()
	rev, err := s.Create(t.Context(), key, []byte(value))
	if err != nil {
		t.Fatalf("Create %s: %v", key, err)
	}
	return rev
}

func mustUpdate(t *testing.T, s storage.Interface, key, value string, expected int64) int64 {
	t.Helper()
	rev, err := s.Update(t.Context(), key, []byte(value), expected)
	if err != nil {
		t.Fatalf("Update %s at %d: %v", key, expected, err)
	}
	return rev
}

func mustRev(t *testing.T, s storage.Interface) int64 {
	t.Helper()
	rev, err := s.CurrentRevision(t.Context())
	if err != nil {
		t.Fatalf("CurrentRevision: %v", err)
	}
	return rev
}

// next is the StartKey that continues after res's last item.
func next(res storage.ListResult) string {
	return res.Items[len(res.Items)-1].Key + "\x00"
}

func wantKV(t *testing.T, kv storage.KeyValue, key, value string, createRev, modRev int64) {
	t.Helper()
	if kv.Key != key || string(kv.Value) != value || kv.CreateRevision != createRev || kv.ModRevision != modRev {
		t.Fatalf("got {%s %q create=%d mod=%d}, want {%s %q create=%d mod=%d}",
			kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision, key, value, createRev, modRev)
	}
}

func wantKeys(t *testing.T, res storage.ListResult, prefix string, keys ...string) {
	t.Helper()
	got := make([]string, 0, len(res.Items))
	for _, kv := range res.Items {
		got = append(got, strings.TrimPrefix(kv.Key, prefix))
	}
	if strings.Join(got, ",") != strings.Join(keys, ",") || len(got) != len(keys) {
		t.Fatalf("listed keys %q, want %q", got, keys)
	}
}

func wantMore(t *testing.T, res storage.ListResult, more bool, remaining int64) {
	t.Helper()
	if res.More != more || res.Remaining != remaining {
		t.Fatalf("More=%v Remaining=%d, want More=%v Remaining=%d", res.More, res.Remaining, more, remaining)
	}
}

func nextEvent(t *testing.T, w <-chan storage.Event) storage.Event {
	t.Helper()
	select {
	case e, ok := <-w:
		if !ok {
			t.Fatal("watch channel closed, want an event")
		}
		return e
	case <-time.After(eventTimeout):
		t.Fatalf("no watch event within %s", eventTimeout)
	}
	return storage.Event{}
}

// wantEvent checks an event; modRev 0 skips the revision check.
func wantEvent(t *testing.T, e storage.Event, typ storage.EventType, key, value string, modRev int64) {
	t.Helper()
	if e.Err != nil {
		t.Fatalf("watch failed: %v", e.Err)
	}
	if e.Type != typ || e.KV.Key != key || string(e.KV.Value) != value || (modRev != 0 && e.KV.ModRevision != modRev) {
		t.Fatalf("event {type=%d %s %q mod=%d}, want {type=%d %s %q mod=%d}",
			e.Type, e.KV.Key, e.KV.Value, e.KV.ModRevision, typ, key, value, modRev)
	}
}

func wantPrev(t *testing.T, e storage.Event, value string, modRev int64) {
	t.Helper()
	if e.Prev == nil {
		t.Fatalf("event on %s has no Prev, want %q at %d", e.KV.Key, value, modRev)
	}
	if e.Prev.Key != e.KV.Key || string(e.Prev.Value) != value || e.Prev.ModRevision != modRev {
		t.Fatalf("Prev = {%s %q mod=%d}, want {%s %q mod=%d}",
			e.Prev.Key, e.Prev.Value, e.Prev.ModRevision, e.KV.Key, value, modRev)
	}
}

// drainClosed waits for a cancelled watch's channel to close, discarding events
// still buffered.
func drainClosed(t *testing.T, w <-chan storage.Event) {
	t.Helper()
	deadline := time.After(eventTimeout)
	for {
		select {
		case _, ok := <-w:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("watch channel not closed %s after cancel", eventTimeout)
		}
	}
}
