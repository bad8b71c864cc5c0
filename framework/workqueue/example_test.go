package workqueue_test

import (
	"fmt"
	"sync"

	"github.com/converge-dev/converge/framework/workqueue"
)

func Example() {
	q := workqueue.New(workqueue.Options[string]{Name: "example"})

	// Event handlers add keys; repeated adds of a waiting key collapse into one.
	for _, key := range []string{"default/a", "default/b", "default/a"} {
		q.Add(key)
	}

	var (
		mu   sync.Mutex
		seen []string
		wg   sync.WaitGroup
	)
	wg.Go(func() { // a worker
		for {
			key, shutdown := q.Get()
			if shutdown {
				return
			}
			mu.Lock()
			seen = append(seen, key)
			mu.Unlock()
			q.Forget(key) // processed successfully: reset its backoff
			q.Done(key)
		}
	})

	q.ShutDown() // the worker drains the queue, then Get reports shutdown
	wg.Wait()
	fmt.Println(seen)
	// Output: [default/a default/b]
}
