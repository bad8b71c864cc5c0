package faults

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	etcdstore "github.com/converge-dev/converge/framework/storage/etcd"
)

// BenchmarkAPIWrite measures ConfigMap creates/s through one API server
// (`converge up --etcd-servers ...`, a child process) against an external etcd
// of 1 and of 3 members (child processes, fsync on), from 32 goroutines, and, for
// reference, against the embedded etcd of plain `converge up`. Opt-in:
//
//	go test -run '^$' -bench BenchmarkAPIWrite -benchtime 3000x ./internal/faults/
func BenchmarkAPIWrite(b *testing.B) {
	for _, members := range []int{0, 1, 3} {
		name := fmt.Sprintf("members=%d", members)
		if members == 0 {
			name = "embedded"
		}
		b.Run(name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			var servers []string
			if members > 0 {
				cluster := newEtcdCluster(b, members, 30+10*members, false)
				cluster.start(ctx, b, etcdstore.ClusterStateNew)
				servers = cluster.endpoints()
			}
			srv := startAPIServer(ctx, b, "converge-up", "127.0.0.4", filepath.Join(b.TempDir(), "data"), servers)
			c := apiClient(b, srv)
			ns := fmt.Sprintf("bench-%d", time.Now().UnixNano())
			createNamespace(ctx, b, c, ns)
			var seq, failed atomic.Int64
			const workers = 32
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for {
						i := seq.Add(1)
						if i > int64(b.N) {
							return
						}
						if _, err := createConfigMap(ctx, c, ns, fmt.Sprintf("cm-%d", i), int(i)); err != nil {
							failed.Add(1)
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			if failed.Load() > 0 {
				b.Fatalf("%d creates failed", failed.Load())
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "creates/s")
		})
	}
}
