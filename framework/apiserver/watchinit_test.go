package apiserver

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// initSignal records how many frames the sink held each time it was told.
type initSignal struct {
	sink *syncSink
	mu   sync.Mutex
	at   []int
	c    chan struct{}
}

func (s *initSignal) Signal() {
	n := len(s.sink.snapshot())
	s.mu.Lock()
	s.at = append(s.at, n)
	s.mu.Unlock()
	s.c <- struct{}{}
}

// TestWatchStreamSignalsInitialized: a watch tells priority and fairness
// (filters.WatchInitialized) once, after its initial events are written, so
// that its seats are held exactly through initialization.
func TestWatchStreamSignalsInitialized(t *testing.T) {
	t.Parallel()
	wc, fs := startTestCache(t, 64)
	for i, name := range []string{"a", "b", "c"} {
		put(t, fs, name, int64(i+2), nil)
	}
	waitRV(t, wc, 4)
	w, initial, err := wc.watch(0, objectFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(initial) != 3 {
		t.Fatalf("initial events: %d, want 3", len(initial))
	}
	sink := &syncSink{flushC: make(chan struct{}, 1)}
	sig := &initSignal{sink: sink, c: make(chan struct{}, 4)}
	ctx, cancel := context.WithCancel(filters.WithWatchInitSignal(t.Context(), sig))
	done := make(chan struct{})
	st := &watchStream{frame: jsonFrames(view{})}
	go func() { defer close(done); defer wc.forget(w); st.run(ctx, w, initial, sink) }()
	select {
	case <-sig.c:
	case <-time.After(5 * time.Second):
		t.Fatal("the watch never signalled its initialization")
	}
	put(t, fs, "d", 5, nil)
	deadline := time.Now().Add(5 * time.Second)
	for len(sink.snapshot()) < 4 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	sig.mu.Lock()
	defer sig.mu.Unlock()
	if len(sig.at) != 1 || sig.at[0] != 3 {
		t.Errorf("signalled with frames written %v, want once after the 3 initial events", sig.at)
	}
}
