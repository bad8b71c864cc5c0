package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/storage"
)

// feedStore is a storage.Interface whose watch is fed by the test.
type feedStore struct {
	storage.Interface
	events chan storage.Event
}

func (f *feedStore) List(context.Context, string, storage.ListOptions) (storage.ListResult, error) {
	return storage.ListResult{Revision: 1}, nil
}

// Watch relays the fed events; its channel is buffered like the etcd store's.
func (f *feedStore) Watch(ctx context.Context, _ string, _ int64) <-chan storage.Event {
	out := make(chan storage.Event, 100)
	go func() {
		defer close(out)
		for {
			select {
			case ev := <-f.events:
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// discardSink counts frames and ends the stream after want of them.
type discardSink struct{ n, want int }

var errSinkDone = errors.New("sink done")

// Write counts a frame at each write that ends one (a frame may come in
// parts: head, object, tail).
func (d *discardSink) Write(p []byte) (int, error) {
	_, _ = io.Discard.Write(p)
	if len(p) == 0 || p[len(p)-1] != '\n' {
		return len(p), nil
	}
	if d.n++; d.n == d.want {
		return len(p), errSinkDone
	}
	return len(p), nil
}

func (d *discardSink) Flush() {}

// BenchmarkWatchFanout measures the CPU time to deliver 10,000 events to N
// watchers. Each watcher runs the stream loop serveWatch runs (watchStream.run:
// wait on the cache's wake channel, consume the ring past its cursor, resolve
// the event type, render, write, flush per batch) into a sink that discards the
// bytes. "once" renders frames the way serveWatch does (serialized once per
// event, bytes shared); "perwatcher" is the naive peer that serializes the object
// again for every watcher. Reported: cpu-ms per 10k events.
func BenchmarkWatchFanout(b *testing.B) {
	const events = 10000
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "namespace": "default", "labels": map[string]any{"app": "bench"}},
		"data":     map[string]any{"k": string(make([]byte, 256))}}
	perWatcher := func(ev *cacheEvent, typ string, _ *[]byte) ([]byte, error) {
		m, _ := api.DecodeMap(ev.obj.data)
		bb, err := json.Marshal(map[string]any{"type": typ, "object": m})
		return append(bb, '\n'), err
	}
	for _, watchers := range []int{1, 10, 100, 1000} {
		for _, mode := range []string{"once", "perwatcher"} {
			if mode == "perwatcher" && watchers > 100 {
				continue // ~5 minutes of CPU; it scales linearly from 100
			}
			b.Run(fmt.Sprintf("%s/watchers=%d", mode, watchers), func(b *testing.B) {
				for range b.N {
					fs := &feedStore{events: make(chan storage.Event, 1024)}
					// The ring holds every event, so no watcher falls behind (the CPU
					// cost is what is measured, not the drop policy).
					wc := newWatchCache(fs, "/registry/core/configmaps/", events+16, logr.Discard(),
						func(key string, value []byte, rv int64) (*cachedObject, error) {
							return buildCachedObject(key, value, rv, true, nil)
						})
					ctx, cancel := context.WithCancel(context.Background())
					go wc.run(ctx)
					if err := wc.waitReady(ctx); err != nil {
						b.Fatal(err)
					}
					st := &watchStream{frame: jsonFrames(view{})}
					if mode == "perwatcher" {
						st.frame = perWatcher
					}
					var wg sync.WaitGroup
					for range watchers {
						w, initial, err := wc.watch(0, objectFilter{namespace: "default"})
						if err != nil {
							b.Fatal(err)
						}
						wg.Add(1)
						go func() {
							defer wg.Done()
							defer wc.forget(w)
							rctx, cancel := context.WithCancel(ctx) // each request has its own context
							defer cancel()
							st.run(rctx, w, initial, &discardSink{want: events})
						}()
					}
					stored, _ := encodeStored(obj)
					startCPU := cpuTime()
					go func() {
						for i := range events {
							fs.events <- storage.Event{Type: storage.EventPut, KV: storage.KeyValue{
								Key: fmt.Sprintf("/registry/core/configmaps/default/x%d", i), Value: stored, ModRevision: int64(i + 2)}}
						}
					}()
					wg.Wait()
					b.ReportMetric(float64(cpuTime()-startCPU)/1e6, "cpu-ms/10k-events")
					cancel()
				}
			})
		}
	}
}
