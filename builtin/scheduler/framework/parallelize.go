package framework

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// DefaultParallelism is kube-scheduler's default number of workers.
const DefaultParallelism = 16

// NewParallelizer returns a Parallelizer with the given number of workers
// (<= 0: min(DefaultParallelism, 4*GOMAXPROCS)).
func NewParallelizer(workers int) Parallelizer {
	if workers <= 0 {
		workers = min(DefaultParallelism, 4*runtime.GOMAXPROCS(0))
	}
	return parallelizer{workers: workers}
}

type parallelizer struct{ workers int }

// Until implements Parallelizer. Pieces are handed out in chunks of
// about sqrt(pieces) to limit contention, as kube-scheduler does.
func (p parallelizer) Until(ctx context.Context, pieces int, work func(ctx context.Context, i int), _ string) {
	if pieces <= 0 {
		return
	}
	workers := min(p.workers, pieces)
	if workers == 1 {
		for i := 0; i < pieces; i++ {
			if ctx.Err() != nil {
				return
			}
			work(ctx, i)
		}
		return
	}
	chunk := 1
	for chunk*chunk < pieces/workers {
		chunk++
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			defer wg.Done()
			for {
				start := int(next.Add(int64(chunk))) - chunk
				if start >= pieces || ctx.Err() != nil {
					return
				}
				for i := start; i < min(start+chunk, pieces); i++ {
					work(ctx, i)
				}
			}
		}()
	}
	wg.Wait()
}
