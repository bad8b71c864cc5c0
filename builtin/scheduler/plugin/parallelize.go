package plugin

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultParallelism is kube-scheduler's default number of workers.
const DefaultParallelism = 16

// DefaultSerialBudget is how long Until works on the calling goroutine before
// it fans out to workers. Filtering and scoring a few hundred nodes with the
// default plugins takes well under this, and on a small machine, where the
// scheduler shares the cores with the API server, starting and waiting for
// workers costs more than it saves; long loops still run in parallel.
const DefaultSerialBudget = 500 * time.Microsecond

// NewParallelizer returns a Parallelizer with the given number of workers
// (<= 0: min(DefaultParallelism, 4*GOMAXPROCS)) and DefaultSerialBudget.
func NewParallelizer(workers int) Parallelizer {
	return NewParallelizerWithBudget(workers, DefaultSerialBudget)
}

// NewParallelizerWithBudget is NewParallelizer with the time Until may work
// serially before starting workers (0: fan out at once, like kube-scheduler).
func NewParallelizerWithBudget(workers int, serialBudget time.Duration) Parallelizer {
	if workers <= 0 {
		workers = min(DefaultParallelism, 4*runtime.GOMAXPROCS(0))
	}
	return parallelizer{workers: workers, budget: serialBudget}
}

// serialStride is about how many pieces run between two clock reads in the
// serial phase of Until.
const serialStride = 64

type parallelizer struct {
	workers int
	budget  time.Duration
}

// chunkSize hands pieces out in chunks of about sqrt(pieces/workers) to limit
// contention, as kube-scheduler does.
func chunkSize(pieces, workers int) int {
	chunk := 1
	for chunk*chunk < pieces/workers {
		chunk++
	}
	return chunk
}

// Until implements Parallelizer. The calling goroutine takes chunks of pieces
// until the serial budget is spent; the rest is shared with worker
// goroutines.
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
	chunk := chunkSize(pieces, workers)
	var next atomic.Int64
	// take runs one chunk; false when nothing is left.
	take := func() bool {
		start := int(next.Add(int64(chunk))) - chunk
		if start >= pieces || ctx.Err() != nil {
			return false
		}
		for i := start; i < min(start+chunk, pieces); i++ {
			work(ctx, i)
		}
		return true
	}
	if p.budget > 0 {
		// The clock is read every serialStride pieces only: reading it can
		// cost as much as a cheap piece of work.
		deadline := time.Now().Add(p.budget)
		for {
			for range max(1, serialStride/chunk) {
				if !take() {
					return
				}
			}
			if time.Now().After(deadline) {
				break
			}
		}
	}
	remaining := pieces - int(next.Load())
	if remaining <= 0 {
		return
	}
	workers = min(workers, (remaining+chunk-1)/chunk)
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for w := 0; w < workers-1; w++ {
		go func() {
			defer wg.Done()
			for take() {
			}
		}()
	}
	for take() {
	}
	wg.Wait()
}
