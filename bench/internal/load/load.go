// Package load runs the benchmarks' concurrent operations: n operations
// spread over conc goroutines, stopping at the first error.
package load

import (
	"sync"
	"sync/atomic"
	"time"
)

// Run performs n operations with conc goroutines and returns the first error.
func Run(conc, n int, op func() error) error { return RunAt(conc, n, 0, op) }

// RunAt performs n operations at rate per second (0: as fast as they
// complete), spread over conc goroutines: operation i starts no earlier than
// i/rate after the start (an open loop as far as conc allows: a server that
// falls behind gets at most conc operations at once). It returns the first
// error.
func RunAt(conc, n int, rate float64, op func() error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				if rate > 0 {
					time.Sleep(time.Until(start.Add(time.Duration(float64(i-1) / rate * float64(time.Second)))))
				}
				if err := op(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
