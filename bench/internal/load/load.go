// Package load runs the benchmarks' concurrent operations: n operations
// spread over conc goroutines, stopping at the first error.
package load

import (
	"sync"
	"sync/atomic"
)

// Run performs n operations with conc goroutines and returns the first error.
func Run(conc, n int, op func() error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	for range conc {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
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
