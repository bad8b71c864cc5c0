package etcd

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRawPut measures Store.Create of 1 KiB values on an embedded etcd with
// fsync on, as `converge up` runs it: one writer, then 64 concurrent writers.
// The API server benchmark compares its create throughput against these.
func BenchmarkRawPut(b *testing.B) {
	start := time.Now()
	e, err := StartEmbedded(b.Context(), EmbeddedOptions{Dir: b.TempDir()})
	if err != nil {
		b.Fatalf("StartEmbedded: %v", err)
	}
	b.Cleanup(func() { e.Close() })
	b.Logf("embedded etcd (fsync) ready in %s", time.Since(start))
	s := New(e.Client())
	value := make([]byte, 1024)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	var seq atomic.Int64
	create := func(b *testing.B) {
		key := fmt.Sprintf("/bench/%010d", seq.Add(1))
		if _, err := s.Create(b.Context(), key, value); err != nil {
			b.Errorf("Create %s: %v", key, err)
		}
	}

	b.Run("sequential", func(b *testing.B) {
		b.SetBytes(int64(len(value)))
		for b.Loop() {
			create(b)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	})
	b.Run("concurrent64", func(b *testing.B) {
		b.SetBytes(int64(len(value)))
		var left atomic.Int64
		left.Store(int64(b.N))
		b.ResetTimer()
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for left.Add(-1) >= 0 {
					create(b)
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	})
}

// BenchmarkLocalCreate measures Store.Create of 1 KiB values through the
// in-process client (New(e.LocalClient())) and straight to the server's KV
// service (NewLocal, the control plane's storage), on the shared server
// (fsync off): the difference is the client's own cost per create.
func BenchmarkLocalCreate(b *testing.B) {
	value := make([]byte, 1024)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	var seq atomic.Int64
	for _, c := range []struct {
		name string
		s    *Store
	}{{"client", New(shared.LocalClient())}, {"direct", NewLocal(shared)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				key := fmt.Sprintf("/bench-local/%010d", seq.Add(1))
				if _, err := c.s.Create(b.Context(), key, value); err != nil {
					b.Fatalf("Create %s: %v", key, err)
				}
			}
		})
	}
}

// BenchmarkLocalWatch measures what a watch adds to each write: 1 KiB creates
// at concurrency 64 through NewLocal on the shared server (fsync off) with no
// watch, with one watch through the in-process client (etcd's watch service,
// the gRPC adapter, the client's watch goroutines) and with one straight on
// the server's store (NewLocal's watches on a lone member), in alternating
// slices. It reports process CPU µs per create for each; the differences to
// "none" are the watches' costs per event.
func BenchmarkLocalWatch(b *testing.B) {
	value := make([]byte, 1024)
	var seq atomic.Int64
	direct := NewLocal(shared)
	sides := []struct {
		name  string
		watch *Store
		cpu   time.Duration
	}{{name: "none"}, {name: "client", watch: New(shared.LocalClient())}, {name: "direct", watch: direct}}
	const slices = 6
	n := max(b.N/slices, 64)
	run := func(watch *Store) time.Duration {
		prefix := fmt.Sprintf("/bench-watch/%d-%d/", time.Now().UnixNano(), seq.Add(1))
		ctx, cancel := context.WithCancel(b.Context())
		defer cancel()
		var got sync.WaitGroup
		if watch != nil {
			w := watch.Watch(ctx, prefix, 0)
			got.Go(func() {
				for seen := 0; seen < n; seen++ {
					if e, ok := <-w; !ok || e.Err != nil {
						b.Errorf("watch ended after %d events: %+v", seen, e)
						return
					}
				}
			})
		}
		c0 := processCPU()
		var left atomic.Int64
		left.Store(int64(n))
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for i := left.Add(-1); i >= 0; i = left.Add(-1) {
					if _, err := direct.Create(ctx, fmt.Sprintf("%s%010d", prefix, i), value); err != nil {
						b.Errorf("Create: %v", err)
						left.Store(-1 << 40) // the watch would wait for it forever
						cancel()
						return
					}
				}
			})
		}
		wg.Wait()
		got.Wait()
		return processCPU() - c0
	}
	b.ResetTimer()
	for range slices {
		for i := range sides {
			sides[i].cpu += run(sides[i].watch)
		}
	}
	for _, s := range sides {
		b.ReportMetric(float64(s.cpu.Microseconds())/float64(n*slices), s.name+"-cpu-us/op")
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
