package workqueue

import (
	"fmt"
	"sync"
	"time"

	"testing"

	"github.com/converge-dev/converge/framework/workqueue"
	cgworkqueue "k8s.io/client-go/util/workqueue"
)

// queue is the part of the API both implementations share.
type queue interface {
	Add(item string)
	Get() (item string, shutdown bool)
	Done(item string)
	ShutDown()
}

type peer struct {
	name string
	new  func() queue
}

var peers = []peer{
	{"converge", func() queue { return workqueue.New(workqueue.Options[string]{}) }},
	{"clientgo", func() queue {
		return cgworkqueue.NewTypedWithConfig(cgworkqueue.TypedQueueConfig[string]{})
	}},
}

// keySpace is the number of distinct keys, like the objects of one controller.
const keySpace = 1024

func keys(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = fmt.Sprintf("default/object-%05d", i)
	}
	return ks
}

// BenchmarkWorkqueue runs each case for both peers back to back, so that load from
// other processes on a shared machine hits both alike. One op is one item handed out
// by Get and marked Done.
//
//   - serial: one goroutine does Add, Get, Done in turn: the bare cost of a cycle.
//   - serial64k: the same over 65536 keys, more than Converge keeps bookkeeping for
//     between uses (1024), so every cycle inserts and deletes map entries.
//   - pN: N producers and N consumers. Producer w owns the keys w, w+N, ... of the
//     key space and adds one only when it is not outstanding (added and not yet
//     Done; a consumer hands it back over a channel after Done), so every Add yields
//     exactly one Get and Done; N consumers Get and Done until the queue is shut down
//     and empty. b.N adds in total. The channel costs the same for both peers.
func BenchmarkWorkqueue(b *testing.B) {
	ks, ks64k := keys(keySpace), keys(1<<16)
	for _, c := range []string{"serial", "serial64k", "p1", "p8"} {
		for _, p := range peers {
			b.Run(p.name+"/"+c, func(b *testing.B) {
				switch c {
				case "serial":
					serial(b, p.new(), ks)
				case "serial64k":
					serial(b, p.new(), ks64k)
				case "p1":
					producerConsumer(b, p.new(), ks, 1)
				case "p8":
					producerConsumer(b, p.new(), ks, 8)
				}
			})
		}
	}
}

func serial(b *testing.B, q queue, ks []string) {
	serialN(q, ks, b.N, func() {
		b.ReportAllocs()
		b.ResetTimer()
	})
}

// BenchmarkWorkqueueInterleaved runs each case in alternating slices, converge
// then client-go, ten times, and reports both peers' ns per item over all slices
// and their ratio (client-go's time ÷ Converge's): load from other processes
// that comes and goes then weighs on both alike. b.N items per peer.
func BenchmarkWorkqueueInterleaved(b *testing.B) {
	ks := keys(keySpace)
	for _, c := range []struct {
		name string
		n    int // producers and consumers; 0: serial
	}{{"serial", 0}, {"p1", 1}, {"p8", 8}} {
		b.Run(c.name, func(b *testing.B) {
			const slices = 10
			per := max(b.N/slices, 1000)
			var total [2]time.Duration
			for range slices {
				for i, p := range peers {
					q := p.new()
					var start time.Time
					begin := func() { start = time.Now() }
					if c.n == 0 {
						serialN(q, ks, per, begin)
					} else {
						runProducerConsumer(q, ks, c.n, per, begin)
					}
					total[i] += time.Since(start)
				}
			}
			items := float64(per * slices)
			b.ReportMetric(float64(total[0].Nanoseconds())/items, "converge-ns/item")
			b.ReportMetric(float64(total[1].Nanoseconds())/items, "clientgo-ns/item")
			b.ReportMetric(float64(total[1])/float64(total[0]), "ratio")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// serialN is serial without a testing.B: n cycles after the warm-up, which
// ends with a call of started.
func serialN(q queue, ks []string, n int, started func()) {
	defer q.ShutDown()
	for _, k := range ks {
		q.Add(k)
	}
	for range ks {
		k, _ := q.Get()
		q.Done(k)
	}
	started()
	for i := range n {
		q.Add(ks[i&(len(ks)-1)])
		k, _ := q.Get()
		q.Done(k)
	}
}

func producerConsumer(b *testing.B, q queue, ks []string, n int) {
	runProducerConsumer(q, ks, n, b.N, func() {
		b.ReportAllocs()
		b.ResetTimer()
	})
}

// runProducerConsumer is the pN case for total adds; started, if set, runs
// once the consumers are running, just before the producers start.
func runProducerConsumer(q queue, ks []string, n, total int, started func()) {
	index := make(map[string]int, len(ks))
	for i, k := range ks {
		index[k] = i
	}
	// free[w] holds producer w's keys that are not outstanding: key i belongs to
	// producer i%n, which adds it only after a consumer has marked it Done.
	free := make([]chan int, n)
	for w := range free {
		free[w] = make(chan int, len(ks)/n+1)
	}
	for i := range ks {
		free[i%n] <- i
	}
	var consumers, producers sync.WaitGroup
	for range n {
		consumers.Go(func() {
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				i := index[k] // read-only map: the consumer's "work"
				q.Done(k)
				free[i%n] <- i
			}
		})
	}
	if started != nil {
		started()
	}
	per := total / n
	for w := range n {
		count := per
		if w == 0 {
			count += total - per*n
		}
		producers.Go(func() {
			for range count {
				q.Add(ks[<-free[w]])
			}
		})
	}
	producers.Wait()
	q.ShutDown()
	consumers.Wait()
}
