package cache_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
)

// fakeLW serves scripted lists and watches and records their resourceVersions.
type fakeLW struct {
	mu      sync.Mutex
	lists   [][]CM           // successive list answers; the last one repeats
	watches [][]client.Event // successive watch streams; then watches block
	calls   []string         // "list RV" / "watch RV"
}

func (f *fakeLW) List(_ context.Context, opts ...client.ListOption) ([]CM, string, error) {
	var o client.ListOptions
	for _, opt := range opts {
		opt.ApplyToList(&o)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "list "+o.ResourceVersion)
	items := f.lists[0]
	if len(f.lists) > 1 {
		f.lists = f.lists[1:]
	}
	rv := "0"
	for _, it := range items {
		rv = max(rv, it.ResourceVersion)
	}
	return slices.Clone(items), rv, nil
}

func (f *fakeLW) Watch(ctx context.Context, opts ...client.ListOption) (client.Watcher, error) {
	var o client.ListOptions
	for _, opt := range opts {
		opt.ApplyToList(&o)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "watch "+o.ResourceVersion)
	w := &fakeWatcher{ch: make(chan client.Event), stop: make(chan struct{}), done: make(chan struct{})}
	var evs []client.Event
	block := true
	if len(f.watches) > 0 {
		evs, f.watches, block = f.watches[0], f.watches[1:], false
	}
	go func() {
		defer close(w.done)
		defer close(w.ch)
		for _, ev := range evs {
			select {
			case w.ch <- ev:
			case <-w.stop:
				return
			case <-ctx.Done():
				return
			}
		}
		if block {
			select {
			case <-w.stop:
			case <-ctx.Done():
			}
		}
	}()
	return w, nil
}

func (f *fakeLW) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

type fakeWatcher struct {
	ch   chan client.Event
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func (w *fakeWatcher) ResultChan() <-chan client.Event { return w.ch }
func (w *fakeWatcher) Stop() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

func cmRV(name, rv, data string) CM {
	return &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv}, Data: map[string]string{"k": data}}
}

func TestReflectorResumeBookmarkAndRelist(t *testing.T) {
	lw := &fakeLW{
		lists: [][]CM{
			{cmRV("a", "1", "a1"), cmRV("b", "2", "b1"), cmRV("c", "3", "c1")},
			// After 410: a unchanged, b changed, c gone, d new.
			{cmRV("a", "1", "a1"), cmRV("b", "7", "b2"), cmRV("d", "8", "d1")},
		},
		watches: [][]client.Event{
			{{Type: client.Modified, Object: cmRV("a", "4", "a2")}, {Type: client.Modified, Object: cmRV("a", "4", "a2")}}, // closes: resume from 4
			{{Type: client.Bookmark, Object: &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{ResourceVersion: "5"}}}},         // closes: resume from 5
			{{Type: client.Error, Err: apierrors.NewResourceExpired("too old")}},                                           // relist
		},
	}
	store := cache.NewStore[CM](nil)
	var mu sync.Mutex
	var events []string
	r := cache.NewReflector[CM](lw, store, cache.ReflectorOptions[CM]{
		InitialBackoff: time.Millisecond,
		Deliver: func(apply func() []cache.Event[CM]) {
			mu.Lock()
			defer mu.Unlock()
			for _, ev := range apply() {
				s := fmt.Sprintf("%s %s %s", ev.Type, cache.KeyOf(ev.Object), ev.Object.Data["k"])
				if ev.Type == cache.Updated {
					s += " old " + ev.Old.Data["k"]
				}
				events = append(events, s)
			}
		},
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	eventually(t, "relist and final watch", func() bool { return len(lw.callLog()) >= 6 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	wantCalls := []string{"list 0", "watch 3", "watch 4", "watch 5", "list ", "watch 8"}
	if got := lw.callLog()[:6]; fmt.Sprint(got) != fmt.Sprint(wantCalls) {
		t.Errorf("calls = %q, want %q", got, wantCalls)
	}
	wantEvents := []string{
		"Added ns/a a1", "Added ns/b b1", "Added ns/c c1",
		"Updated ns/a a2 old a1", // the duplicate is dropped
		// relist: a went back to "1" in this script, so it changed too
		"Updated ns/a a1 old a2", "Updated ns/b b2 old b1", "Deleted ns/c c1", "Added ns/d d1",
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(events) != fmt.Sprint(wantEvents) {
		t.Errorf("events =\n%q\nwant\n%q", events, wantEvents)
	}
	if got := store.Keys(); fmt.Sprint(got) != "[ns/a ns/b ns/d]" {
		t.Errorf("store keys = %v", got)
	}
	if rv := store.ResourceVersion(); rv != "8" {
		t.Errorf("store RV = %q, want 8", rv)
	}
}

func TestStoreIndexers(t *testing.T) {
	s := cache.NewStore(cache.Indexers[CM]{"data": func(cm CM) []string { return []string{cm.Data["k"]} }})
	s.Upsert(cmRV("a", "1", "x"))
	s.Upsert(cmRV("b", "1", "x"))
	if old, ok := s.Upsert(cmRV("a", "2", "y")); !ok || old.Data["k"] != "x" {
		t.Fatalf("Upsert old = %v, %v", old, ok)
	}
	got, err := s.ByIndex("data", "x")
	if err != nil || len(got) != 1 || got[0].Name != "b" {
		t.Fatalf("ByIndex(data, x) = %v, %v", got, err)
	}
	if _, ok := s.Delete("ns/b"); !ok {
		t.Fatal("Delete: not found")
	}
	if got, _ := s.ByIndex("data", "x"); len(got) != 0 {
		t.Fatalf("index not cleaned: %v", got)
	}
	if got, _ := s.ByIndex(cache.NamespaceIndex, "ns"); len(got) != 1 {
		t.Fatalf("namespace index = %v", got)
	}
}
