package etcd

import (
	"fmt"
	"sync"
	"sync/atomic"
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
