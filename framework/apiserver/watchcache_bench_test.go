package apiserver

import (
	"context"
	"encoding/json"
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

func (f *feedStore) Watch(ctx context.Context, _ string, _ int64) <-chan storage.Event {
	out := make(chan storage.Event)
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

// BenchmarkWatchFanout measures the CPU time to deliver 10,000 events to N
// watchers: "once" is the watch cache (each event serialized once, the bytes shared),
// "perwatcher" the naive peer that serializes the object again for every watcher.
// Reported: cpu-ms per 10k events.
func BenchmarkWatchFanout(b *testing.B) {
	const events = 10000
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "namespace": "default", "labels": map[string]any{"app": "bench"}},
		"data":     map[string]any{"k": string(make([]byte, 256))}}
	for _, watchers := range []int{1, 10, 100, 1000} {
		for _, mode := range []string{"once", "perwatcher"} {
			if mode == "perwatcher" && watchers > 100 {
				continue // ~5 minutes of CPU; it scales linearly from 100
			}
			b.Run(fmt.Sprintf("%s/watchers=%d", mode, watchers), func(b *testing.B) {
				for range b.N {
					fs := &feedStore{events: make(chan storage.Event, 1024)}
					wc := newWatchCache(fs, "/registry/core/configmaps/", 1024, logr.Discard(),
						func(key string, value []byte, rv int64) (*cachedObject, error) {
							return buildCachedObject(key, value, rv, true, nil)
						})
					ctx, cancel := context.WithCancel(context.Background())
					go wc.run(ctx)
					if err := wc.waitReady(ctx); err != nil {
						b.Fatal(err)
					}
					var wg sync.WaitGroup
					for range watchers {
						w, _, err := wc.watch(0, objectFilter{}, events+16, false)
						if err != nil {
							b.Fatal(err)
						}
						wg.Add(1)
						go func() {
							defer wg.Done()
							n := 0
							for n < events {
								ev := <-w.ch
								if mode == "once" {
									_, _ = io.Discard.Write(ev.frame(w.resolve(ev)))
								} else {
									m, _ := api.DecodeMap(ev.obj.data)
									bb, _ := json.Marshal(map[string]any{"type": w.resolve(ev), "object": m})
									_, _ = io.Discard.Write(bb)
								}
								n++
							}
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
