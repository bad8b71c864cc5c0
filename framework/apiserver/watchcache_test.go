package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/storage"
)

const testPrefix = "/registry/core/configmaps/"

// startTestCache runs a watch cache over a feedStore until the test ends.
func startTestCache(t *testing.T, capacity int) (*watchCache, *feedStore) {
	t.Helper()
	fs := &feedStore{events: make(chan storage.Event, 1024)}
	return startCacheOn(t, fs, capacity), fs
}

// startCacheOn runs a watch cache of testPrefix over store until the test ends.
func startCacheOn(t *testing.T, store storage.Interface, capacity int) *watchCache {
	t.Helper()
	wc := newWatchCache(store, testPrefix, capacity, logr.Discard(),
		func(key string, value []byte, rv int64) (*cachedObject, error) {
			return buildCachedObject(key, value, rv, true, nil)
		})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); wc.run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if err := wc.waitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return wc
}

func storedConfigMap(t *testing.T, name string, labels map[string]any) []byte {
	t.Helper()
	b, err := encodeStored(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default", "labels": labels}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func put(t *testing.T, fs *feedStore, name string, rv int64, labels map[string]any) {
	t.Helper()
	fs.events <- storage.Event{Type: storage.EventPut, KV: storage.KeyValue{
		Key: testPrefix + "default/" + name, Value: storedConfigMap(t, name, labels), ModRevision: rv}}
}

func del(t *testing.T, fs *feedStore, name string, rv int64, labels map[string]any) {
	t.Helper()
	prev := storage.KeyValue{Key: testPrefix + "default/" + name, Value: storedConfigMap(t, name, labels)}
	fs.events <- storage.Event{Type: storage.EventDelete, KV: storage.KeyValue{Key: prev.Key, ModRevision: rv}, Prev: &prev}
}

// waitRV waits until the cache applied rv.
func waitRV(t *testing.T, wc *watchCache, rv int64) {
	t.Helper()
	if !wc.waitForRV(t.Context(), rv, 5*time.Second) {
		t.Fatalf("cache did not reach rv %d (at %d)", rv, wc.currentRV())
	}
}

type seen struct {
	Type string
	Name string
	RV   int64
}

func drain(t *testing.T, w *cacheWatcher) []seen {
	t.Helper()
	var out []seen
	if _, err := w.consume(func(ev *cacheEvent, typ string) error {
		out = append(out, seen{typ, ev.obj.name, ev.rv})
		return nil
	}); err != nil {
		t.Fatalf("consume: %v", err)
	}
	return out
}

func TestWatchCacheDeliversInOrder(t *testing.T) {
	t.Parallel()
	wc, fs := startTestCache(t, 64)
	w, initial, err := wc.watch(0, objectFilter{})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.forget(w)
	if len(initial) != 0 {
		t.Fatalf("initial = %d events, want 0", len(initial))
	}
	var want []seen
	for i := range 50 {
		name := fmt.Sprintf("cm%d", i%5)
		typ := api.EventAdded
		if i >= 5 {
			typ = api.EventModified
		}
		put(t, fs, name, int64(i+2), nil)
		want = append(want, seen{typ, name, int64(i + 2)})
	}
	waitRV(t, wc, 51)
	if diff := cmp.Diff(want, drain(t, w)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := drain(t, w); len(got) != 0 {
		t.Errorf("second consume = %v, want nothing", got)
	}

	// A new watch from rv=0 gets the objects as ADDED, sorted by key; one from
	// rv=48 replays the events after 48.
	w0, initial, err := wc.watch(0, objectFilter{})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.forget(w0)
	var names []string
	for _, ev := range initial {
		names = append(names, ev.obj.name)
	}
	if diff := cmp.Diff([]string{"cm0", "cm1", "cm2", "cm3", "cm4"}, names); diff != "" {
		t.Errorf("initial (-want +got):\n%s", diff)
	}
	wr, initial, err := wc.watch(48, objectFilter{})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.forget(wr)
	if len(initial) != 0 {
		t.Errorf("replay returned %d initial events, want them through the cursor", len(initial))
	}
	if diff := cmp.Diff(want[len(want)-3:], drain(t, wr)); diff != "" {
		t.Errorf("replay (-want +got):\n%s", diff)
	}
}

func TestWatchCacheSelectorTransitions(t *testing.T) {
	t.Parallel()
	wc, fs := startTestCache(t, 64)
	f := objectFilter{namespace: "default", match: func(o *cachedObject, _ map[string]string) bool { return o.labels["app"] == "a" }}
	w, _, err := wc.watch(0, f)
	if err != nil {
		t.Fatal(err)
	}
	defer wc.forget(w)
	a := map[string]any{"app": "a"}
	b := map[string]any{"app": "b"}
	put(t, fs, "x", 2, a) // ADDED
	put(t, fs, "x", 3, b) // leaves the selector: DELETED
	put(t, fs, "x", 4, b) // outside: nothing
	put(t, fs, "x", 5, a) // enters: ADDED
	put(t, fs, "x", 6, a) // MODIFIED
	put(t, fs, "y", 7, b) // never matches
	del(t, fs, "y", 8, b)
	del(t, fs, "x", 9, a) // DELETED
	waitRV(t, wc, 9)
	want := []seen{
		{api.EventAdded, "x", 2}, {api.EventDeleted, "x", 3}, {api.EventAdded, "x", 5},
		{api.EventModified, "x", 6}, {api.EventDeleted, "x", 9},
	}
	if diff := cmp.Diff(want, drain(t, w)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if w.lastRV != 9 {
		t.Errorf("lastRV = %d, want 9 (events outside the selector count as seen)", w.lastRV)
	}
}

func TestWatchCacheTerminatesSlowWatcher(t *testing.T) {
	t.Parallel()
	wc, fs := startTestCache(t, 8)
	slow, _, err := wc.watch(0, objectFilter{})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.forget(slow)
	fast, _, err := wc.watch(0, objectFilter{})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.forget(fast)
	var fastSeen []seen
	for i := range 20 {
		put(t, fs, fmt.Sprintf("cm%d", i), int64(i+2), nil)
		waitRV(t, wc, int64(i+2))
		fastSeen = append(fastSeen, drain(t, fast)...)
	}
	if len(fastSeen) != 20 {
		t.Errorf("fast watcher saw %d events, want 20", len(fastSeen))
	}
	n, err := slow.consume(func(*cacheEvent, string) error { return nil })
	if !errors.Is(err, errFellBehind) || n != 0 {
		t.Fatalf("slow consume = %d, %v; want 0, errFellBehind", n, err)
	}
	select {
	case <-slow.done:
	default:
		t.Fatal("slow watcher not terminated")
	}
	// Its client resumes from the last revision it saw: too old now, so it relists.
	if _, _, err := wc.watch(slow.lastRV, objectFilter{}); !errors.As(err, new(errTooOld)) {
		t.Errorf("resume from %d: err = %v, want errTooOld", slow.lastRV, err)
	}
	// A client that kept up resumes from within the ring.
	w, _, err := wc.watch(17, objectFilter{})
	if err != nil {
		t.Fatalf("resume from 17: %v", err)
	}
	defer wc.forget(w)
	if got := drain(t, w); len(got) != 4 || got[0].RV != 18 {
		t.Errorf("resume from 17 = %v, want rv 18..21", got)
	}
}

// syncSink collects frames for a test.
type syncSink struct {
	mu      sync.Mutex
	frames  []map[string]any
	partial []byte // a frame's parts written so far (head, object, tail)
	flushC  chan struct{}
}

func (s *syncSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partial = append(s.partial, p...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		var m map[string]any
		if err := json.Unmarshal(s.partial[:i], &m); err != nil {
			return 0, err
		}
		s.frames = append(s.frames, m)
		s.partial = s.partial[i+1:]
	}
}

func (s *syncSink) Flush() {
	select {
	case s.flushC <- struct{}{}:
	default:
	}
}

func (s *syncSink) snapshot() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.frames...)
}

func TestWatchStreamBookmarkRV(t *testing.T) {
	t.Parallel()
	wc, fs := startTestCache(t, 64)
	// The watcher selects nothing, but its bookmarks must still advance to the
	// revision of the latest event.
	f := objectFilter{match: func(o *cachedObject, _ map[string]string) bool { return o.labels["app"] == "none" }}
	w, _, err := wc.watch(0, f)
	if err != nil {
		t.Fatal(err)
	}
	st := &watchStream{frame: jsonFrames(view{}), bookmarkEvery: 5 * time.Millisecond,
		bookmark: func(rv int64) []byte {
			return fmt.Appendf(nil, `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"%d"}}}`+"\n", rv)
		}}
	sink := &syncSink{flushC: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); defer wc.forget(w); st.run(ctx, w, nil, sink) }()
	for i := range 10 {
		put(t, fs, fmt.Sprintf("cm%d", i), int64(i+2), nil)
	}
	deadline := time.After(5 * time.Second)
	for {
		frames := sink.snapshot()
		if len(frames) > 0 {
			last := frames[len(frames)-1]
			for _, fr := range frames {
				if fr["type"] != "BOOKMARK" {
					t.Fatalf("unexpected frame %v", fr)
				}
			}
			if api.NestedString(last, "object", "metadata", "resourceVersion") == "11" {
				break
			}
		}
		select {
		case <-deadline:
			t.Fatalf("no bookmark at rv 11; frames: %v", frames)
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	<-done
}

func TestWatchStreamEndsWithoutLeaks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fs := &feedStore{events: make(chan storage.Event, 1024)}
	wc := newWatchCache(fs, testPrefix, 64, logr.Discard(),
		func(key string, value []byte, rv int64) (*cachedObject, error) {
			return buildCachedObject(key, value, rv, true, nil)
		})
	ctx, cancel := context.WithCancel(t.Context())
	cacheDone := make(chan struct{})
	go func() { defer close(cacheDone); wc.run(ctx) }()
	if err := wc.waitReady(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	sinks := make([]*syncSink, 20)
	for i := range sinks {
		w, initial, err := wc.watch(0, objectFilter{})
		if err != nil {
			t.Fatal(err)
		}
		sinks[i] = &syncSink{flushC: make(chan struct{}, 1)}
		st := &watchStream{frame: jsonFrames(view{}), timeout: time.Duration(i%2) * time.Hour}
		rctx, rcancel := context.WithCancel(ctx)
		defer rcancel()
		wg.Add(1)
		go func() { defer wg.Done(); defer wc.forget(w); st.run(rctx, w, initial, sinks[i]) }()
		if i%4 == 0 {
			rcancel() // clients that leave early
		}
	}
	for i := range 40 {
		put(t, fs, fmt.Sprintf("cm%d", i), int64(i+2), nil)
	}
	waitRV(t, wc, 41)
	// Watchers that stayed see all 40 events in order; then the cache stops and
	// every stream ends.
	for i, s := range sinks {
		if i%4 == 0 {
			continue
		}
		deadline := time.Now().Add(5 * time.Second)
		for len(s.snapshot()) < 40 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		frames := s.snapshot()
		if len(frames) != 40 {
			t.Fatalf("watcher %d saw %d frames, want 40", i, len(frames))
		}
		for j, fr := range frames {
			if got := api.NestedString(fr, "object", "metadata", "resourceVersion"); got != fmt.Sprint(j+2) {
				t.Fatalf("watcher %d frame %d rv %s, want %d", i, j, got, j+2)
			}
		}
	}
	cancel()
	<-cacheDone
	wg.Wait()
}

func TestCachedObjectRendersEachVersionOnce(t *testing.T) {
	t.Parallel()
	stored, err := encodeStored(map[string]any{"apiVersion": "g/v1beta1", "kind": "K",
		"metadata": map[string]any{"name": "a", "namespace": "default"}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := buildCachedObject(testPrefix+"default/a", stored, 7, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	v1 := view{version: "g/v1", gv: api.GroupVersion{Group: "g", Version: "v1"},
		convert: func(m map[string]any, to api.GroupVersion) (map[string]any, error) {
			calls++
			m["apiVersion"] = to.String()
			return m, nil
		}}
	v1beta1 := v1
	v1beta1.version, v1beta1.gv.Version = "g/v1beta1", "v1beta1"
	for range 3 {
		for _, typ := range []string{api.EventAdded, api.EventModified} {
			b, err := frameBytes(o, typ, v1)
			if err != nil {
				t.Fatal(err)
			}
			var fr map[string]any
			if err := json.Unmarshal(b, &fr); err != nil {
				t.Fatal(err)
			}
			if fr["type"] != typ || api.NestedString(fr, "object", "apiVersion") != "g/v1" ||
				api.NestedString(fr, "object", "metadata", "resourceVersion") != "7" {
				t.Errorf("frame = %s", b)
			}
		}
		data, err := o.dataFor(v1)
		if err != nil || !bytes.Contains(data, []byte(`"apiVersion":"g/v1"`)) {
			t.Errorf("dataFor(v1) = %s, %v", data, err)
		}
		// The stored version is served as stored, without conversion.
		if b, _ := frameBytes(o, api.EventAdded, v1beta1); !bytes.Contains(b, []byte(`"apiVersion":"g/v1beta1"`)) {
			t.Errorf("frame(v1beta1) = %s", b)
		}
	}
	if calls != 1 {
		t.Errorf("converted %d times, want once", calls)
	}
}

// frameBytes is the watch frame of o as a watch's initial event.
func frameBytes(o *cachedObject, typ string, v view) ([]byte, error) {
	var scratch []byte
	return (&cacheEvent{typ: typ, obj: o, rv: o.rv}).frame(typ, v, &scratch)
}

// Recent ring events share one frame among watchers; events more than
// keptFrames old, or evicted from the ring, drop it and render per watcher,
// so the ring does not hold a second copy of thousands of objects.
func TestWatchCacheKeepsFramesOfRecentEvents(t *testing.T) {
	t.Parallel()
	const capacity = keptFrames + 64
	wc, fs := startTestCache(t, capacity)
	w, _, err := wc.watch(1, objectFilter{})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.forget(w)
	n := int64(capacity + 10)
	for rv := int64(2); rv < 2+n; rv++ {
		put(t, fs, fmt.Sprintf("cm-%d", rv), rv, nil)
	}
	waitRV(t, wc, 1+n)
	head := wc.head.Load()
	var kept, dropped int
	for seq := head - int64(wc.ringLen); seq < head; seq++ {
		ring := wc.slots()
		ev := ring[seq%int64(len(ring))].Load()
		if ev.kept.Load() != nil {
			kept++
			if head-seq > keptFrames {
				t.Errorf("event %d of %d keeps its frames", seq, head)
			}
			var s1, s2 []byte
			f1, _ := ev.frame(api.EventAdded, view{}, &s1)
			f2, _ := ev.frame(api.EventAdded, view{}, &s2)
			if &f1[0] != &f2[0] {
				t.Errorf("recent event %d: frames not shared", seq)
			}
			continue
		}
		dropped++
		var scratch []byte
		f, err := ev.frame(api.EventAdded, view{}, &scratch)
		if err != nil || !bytes.HasPrefix(f, []byte(`{"type":"ADDED","object":{`)) || &f[0] != &scratch[0] {
			t.Errorf("old event %d: frame %q, %v, not rendered into the scratch buffer", seq, f, err)
		}
	}
	if kept != keptFrames || dropped != capacity-keptFrames {
		t.Errorf("%d events keep frames and %d do not, want %d and %d", kept, dropped, keptFrames, capacity-keptFrames)
	}
}

// The ring starts with minRing slots and doubles up to its capacity: events
// published across growths reach a watcher in order, a replay finds them in
// the grown ring, and eviction starts only at the capacity.
func TestWatchCacheRingGrows(t *testing.T) {
	t.Parallel()
	const capacity = 300
	wc, fs := startTestCache(t, capacity)
	if n := len(wc.slots()); n != minRing {
		t.Fatalf("new ring has %d slots, want %d", n, minRing)
	}
	w, _, err := wc.watch(0, objectFilter{})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.forget(w)
	var want, got []seen
	for i := range 400 {
		name := fmt.Sprintf("cm%d", i)
		put(t, fs, name, int64(i+2), nil)
		want = append(want, seen{api.EventAdded, name, int64(i + 2)})
		if i%50 == 49 && i < capacity {
			waitRV(t, wc, int64(i+2))
			got = append(got, drain(t, w)...)
		}
	}
	waitRV(t, wc, 401)
	if n := len(wc.slots()); n != capacity {
		t.Errorf("ring has %d slots after 400 events, want %d", n, capacity)
	}
	got = append(got, drain(t, w)...)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	wr, _, err := wc.watch(350, objectFilter{})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.forget(wr)
	if diff := cmp.Diff(want[349:], drain(t, wr)); diff != "" {
		t.Errorf("replay (-want +got):\n%s", diff)
	}
	if _, _, err := wc.watch(50, objectFilter{}); !errors.As(err, new(errTooOld)) {
		t.Errorf("watch from an evicted revision: %v, want errTooOld", err)
	}
}
