package apiserver

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/storage"
	"github.com/converge-dev/converge/framework/storage/etcd"
)

// backfillStore is a store on an embedded etcd (NewLocal, as `converge up`
// runs) until the test ends.
func backfillStore(t *testing.T) *etcd.Store {
	t.Helper()
	e, err := etcd.StartEmbedded(t.Context(), etcd.EmbeddedOptions{Dir: t.TempDir(), NoFsync: true, LogLevel: "error"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return etcd.NewLocal(e)
}

func storePut(t *testing.T, s storage.Interface, key string, value []byte) int64 {
	t.Helper()
	rv, err := s.Create(t.Context(), key, value)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}

// TestWatchBelowTheCacheHistory: a client that wrote an object (or listed
// from storage) and then starts the resource's watch cache with a watch from
// that revision gets every change after it — those in the gap between its
// revision and the cache's first list from etcd, then the cache's — not
// "too old" (the conformance suite's CRD fixture does exactly this; it failed
// when another resource was written in between).
func TestWatchBelowTheCacheHistory(t *testing.T) {
	store := backfillStore(t)
	cm := func(name string, labels map[string]any) (string, []byte) {
		return testPrefix + "default/" + name, storedConfigMap(t, name, labels)
	}
	k, v := cm("a", map[string]any{"app": "x"})
	from := storePut(t, store, k, v)
	// The gap: changes of this resource and of others.
	k, v = cm("b", map[string]any{"app": "x"})
	rvB := storePut(t, store, k, v)
	storePut(t, store, "/registry/core/secrets/default/s", []byte(`{}`))
	k, v = cm("a", map[string]any{"app": "y"}) // leaves the selector: DELETED for it
	rvA, err := store.Update(t.Context(), k, v, from)
	if err != nil {
		t.Fatal(err)
	}
	storePut(t, store, "/registry/core/secrets/default/t", []byte(`{}`))

	wc := startCacheOn(t, store, 64)
	if wc.historyFrom <= rvA {
		t.Fatalf("cache history from %d, want after the gap (%d)", wc.historyFrom, rvA)
	}
	if _, _, err := wc.watch(from, objectFilter{}); !errors.As(err, new(errTooOld)) {
		t.Fatalf("the ring alone answered a watch from %d (history from %d): %v", from, wc.historyFrom, err)
	}
	appX := objectFilter{match: func(o *cachedObject, _ map[string]string) bool { return o.labels["app"] == "x" }}
	all, _, err := wc.watchFrom(t.Context(), from, objectFilter{})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.forget(all)
	selected, _, err := wc.watchFrom(t.Context(), from, appX)
	if err != nil {
		t.Fatal(err)
	}
	defer wc.forget(selected)
	// After the gap, from the ring.
	k, v = cm("c", map[string]any{"app": "x"})
	rvC := storePut(t, store, k, v)
	waitRV(t, wc, rvC)

	if diff := cmp.Diff([]seen{{api.EventAdded, "b", rvB}, {api.EventModified, "a", rvA}, {api.EventAdded, "c", rvC}}, drain(t, all)); diff != "" {
		t.Errorf("watch from %d (-want +got):\n%s", from, diff)
	}
	if diff := cmp.Diff([]seen{{api.EventAdded, "b", rvB}, {api.EventDeleted, "a", rvA}, {api.EventAdded, "c", rvC}}, drain(t, selected)); diff != "" {
		t.Errorf("watch from %d of app=x (-want +got):\n%s", from, diff)
	}

	// Compacted history stays "too old".
	if err := store.Compact(t.Context(), rvA); err != nil {
		t.Fatal(err)
	}
	if _, _, err := wc.watchFrom(t.Context(), from, objectFilter{}); !errors.As(err, new(errTooOld)) {
		t.Errorf("watch from compacted revision %d: %v, want too old", from, err)
	}
}

// TestWatchBelowTheCacheHistoryWithoutProgress: a store that cannot report
// watch progress cannot tell an empty gap from a slow one, so such a watch
// stays "too old".
func TestWatchBelowTheCacheHistoryWithoutProgress(t *testing.T) {
	wc, fs := startTestCache(t, 64)
	put(t, fs, "a", 10, nil)
	waitRV(t, wc, 10)
	wc.mu.Lock()
	wc.historyFrom = 10 // as after a list at 10
	wc.mu.Unlock()
	if _, _, err := wc.watchFrom(t.Context(), 5, objectFilter{}); !errors.As(err, new(errTooOld)) {
		t.Errorf("watch from 5: %v, want too old", err)
	}
}

// TestWatchBelowTheCacheHistoryDeletion: an object deleted in the gap reaches
// the watcher as DELETED at the deletion's revision, carrying its last state
// with that revision as its resourceVersion (as the cache's own deletions).
func TestWatchBelowTheCacheHistoryDeletion(t *testing.T) {
	store := backfillStore(t)
	key := testPrefix + "default/gone"
	from := storePut(t, store, key, storedConfigMap(t, "gone", map[string]any{"app": "x"}))
	_, rvDel, err := store.Delete(t.Context(), key, 0)
	if err != nil {
		t.Fatal(err)
	}
	storePut(t, store, "/registry/core/secrets/default/s", []byte(`{}`))

	wc := startCacheOn(t, store, 64)
	w, _, err := wc.watchFrom(t.Context(), from, objectFilter{})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.forget(w)
	var got []*cacheEvent
	if _, err := w.consume(func(ev *cacheEvent, _ string) error { got = append(got, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].typ != api.EventDeleted || got[0].rv != rvDel || got[0].obj.rv != rvDel ||
		got[0].obj.labels["app"] != "x" || got[0].prev == nil || got[0].prev.rv != from {
		t.Fatalf("events %+v, want one DELETED of gone at %d (last state at %d, labels kept)", got, rvDel, from)
	}
	if want := fmt.Sprintf(`"resourceVersion":"%d"`, rvDel); !strings.Contains(string(got[0].obj.data), want) {
		t.Errorf("deleted object %s, want %s", got[0].obj.data, want)
	}
}
