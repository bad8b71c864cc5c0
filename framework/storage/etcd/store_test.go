package etcd

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/converge-dev/converge/framework/storage"
	"github.com/converge-dev/converge/framework/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.RunConformance(t, func(t *testing.T) storage.Interface {
		return New(shared.Client())
	})
}

// TestConformanceLocalClient runs the same contract through the in-process
// client, the one the control plane's storage uses with embedded etcd.
func TestConformanceLocalClient(t *testing.T) {
	storagetest.RunConformance(t, func(t *testing.T) storage.Interface {
		return New(shared.LocalClient())
	})
}

// TestConformanceLocal runs it through NewLocal, the control plane's storage
// with embedded etcd: creates and updates straight to the server's KV service.
func TestConformanceLocal(t *testing.T) {
	storagetest.RunConformance(t, func(t *testing.T) storage.Interface {
		return NewLocal(shared)
	})
}

// TestLocalWritesEndWithTheServer: once the embedded server is closing (its
// in-process client closed first), NewLocal's creates and updates fail
// instead of going on into a server that is closing its backend (whose watch
// streams then read a nil bbolt transaction: the process crashed, one
// controlplane test run in about thirty).
func TestLocalWritesEndWithTheServer(t *testing.T) {
	e, err := StartEmbedded(t.Context(), EmbeddedOptions{Dir: t.TempDir(), NoFsync: true, LogLevel: "error"})
	if err != nil {
		t.Fatal(err)
	}
	s := NewLocal(e)
	rev, err := s.Create(t.Context(), "/k", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// Close begins by closing the in-process client; the server is still up
	// until it has done so.
	_ = e.local.Close() // context.Canceled: cancelling is all it does
	if _, err := s.Create(t.Context(), "/k2", []byte("v")); err == nil {
		t.Error("a create after Close succeeded")
	}
	if _, err := s.Update(t.Context(), "/k", []byte("w"), rev); err == nil {
		t.Error("an update after Close succeeded")
	}
}

// TestWatchNoLeak checks that a cancelled watch leaves no goroutine behind. It
// is not parallel, so the goroutines it sees are its own.
func TestWatchNoLeak(t *testing.T) {
	for _, local := range []bool{false, true} {
		client := shared.Client()
		if local {
			client = shared.LocalClient()
		}
		watchNoLeak(t, New(client))
	}
	watchNoLeak(t, NewLocal(shared))
}

// TestLocalWatchesEndWithTheServer: NewLocal's watches on a lone member read
// the server's store themselves (no watch service between), and closing the
// embedded server ends them with an error before the server stops, so that
// none reads a previous value from a closed backend; a watch started after
// that fails at once.
func TestLocalWatchesEndWithTheServer(t *testing.T) {
	e, err := StartEmbedded(t.Context(), EmbeddedOptions{Dir: t.TempDir(), NoFsync: true, LogLevel: "error"})
	if err != nil {
		t.Fatal(err)
	}
	s := NewLocal(e)
	w := s.Watch(t.Context(), "/w/", 0)
	e.watches.mu.Lock()
	direct := len(e.watches.streams)
	e.watches.mu.Unlock()
	if direct != 1 {
		t.Fatalf("%d watch streams on the server's store, want 1 (the watch's own)", direct)
	}
	rev, err := s.Create(t.Context(), "/w/a", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(t.Context(), "/w/a", []byte("v2"), rev); err != nil {
		t.Fatal(err)
	}
	if ev := <-w; ev.Type != storage.EventPut || ev.Prev != nil {
		t.Fatalf("first event %+v, want the create", ev)
	}
	if ev := <-w; ev.Type != storage.EventPut || ev.Prev == nil || string(ev.Prev.Value) != "v" {
		t.Fatalf("second event %+v, want the update with its previous value", ev)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	ev, ok := <-w
	if !ok || !errors.Is(ev.Err, errWatchClosed) {
		t.Fatalf("after Close: %+v (open %v), want a closed-watch error", ev, ok)
	}
	if _, ok := <-w; ok {
		t.Fatal("watch channel still open after its error")
	}
	later := s.Watch(t.Context(), "/w/", rev)
	if ev := <-later; !errors.Is(ev.Err, errWatchClosed) {
		t.Fatalf("watch after Close: %+v, want a closed-watch error", ev)
	}
}

func watchNoLeak(t *testing.T, s *Store) {
	ignore := goleak.IgnoreCurrent()
	p := testPrefix(t)
	ctx, cancel := context.WithCancel(t.Context())
	watches := make([]<-chan storage.Event, 0, 10)
	for range 10 {
		watches = append(watches, s.Watch(ctx, p, 0))
	}
	if _, err := s.Create(t.Context(), p+"a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	for _, w := range watches {
		if e := <-w; e.Err != nil || e.KV.Key != p+"a" {
			t.Fatalf("event %+v", e)
		}
	}
	cancel()
	for _, w := range watches {
		for range w {
		}
	}
	goleak.VerifyNone(t, ignore)
}

// TestWatchFailsWhenServerStops checks that a watch on a stopped server ends with
// an error event or a closed channel instead of hanging, through either client.
func TestWatchFailsWhenServerStops(t *testing.T) {
	t.Parallel()
	for _, local := range []bool{false, true} {
		t.Run(map[bool]string{false: "grpc", true: "local"}[local], func(t *testing.T) {
			t.Parallel()
			e := startTestServer(t)
			client := e.Client()
			if local {
				client = e.LocalClient()
			}
			s := New(client)
			w := s.Watch(t.Context(), "/x/", 0)
			if _, err := s.Create(t.Context(), "/x/a", []byte("v")); err != nil {
				t.Fatal(err)
			}
			if ev := <-w; ev.Err != nil {
				t.Fatalf("first event: %v", ev.Err)
			}
			if err := e.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			select {
			case ev, ok := <-w:
				if ok && ev.Err == nil {
					t.Fatalf("event after the server stopped: %+v", ev)
				}
				t.Logf("watch ended with %v", ev.Err)
			case <-time.After(30 * time.Second):
				t.Fatal("watch still open 30s after the server stopped")
			}
		})
	}
}

func TestCompactErrors(t *testing.T) {
	t.Parallel()
	e := startTestServer(t)
	s := New(e.Client())
	ctx := t.Context()
	rev, err := s.Create(ctx, "/c/a", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx, rev+100); !errors.Is(err, storage.ErrFutureRevision) {
		t.Fatalf("Compact beyond the store: got %v, want ErrFutureRevision", err)
	}
	if err := s.Compact(ctx, rev); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	if err := s.Compact(ctx, rev); !errors.Is(err, storage.ErrCompacted) {
		t.Fatalf("Compact again: got %v, want ErrCompacted", err)
	}
}

func TestUpdateUnconditional(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]*Store{"client": New(shared.Client()), "local": NewLocal(shared)} {
		t.Run(name, func(t *testing.T) { updateUnconditional(t, s) })
	}
}

func updateUnconditional(t *testing.T, s *Store) {
	ctx := t.Context()
	p := testPrefix(t)
	if _, err := s.Update(ctx, p+"missing", []byte("v"), 0); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Update(0) of a missing key: got %v, want ErrNotFound", err)
	}
	rev, err := s.Create(ctx, p+"a", []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	rev2, err := s.Update(ctx, p+"a", []byte("v2"), 0)
	if err != nil || rev2 <= rev {
		t.Fatalf("Update(0) = %d, %v", rev2, err)
	}
}
