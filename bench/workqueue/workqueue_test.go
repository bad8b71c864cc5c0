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
//     Done), so every Add yields exactly one Get and Done; N consumers Get and Done
//     until the queue is shut down and empty. b.N adds in total. Consumers hand
//     the keys they marked Done back to their producers in batches (see
//     runProducerConsumer), so the hand-back, which is the harness and not the
//     queue, costs a fraction of a channel operation per item.
//   - pN-perkey: the same with every key handed back on its own over a channel.
//     More than half of its time is the channel's and the Go scheduler's:
//     a producer that waits for keys parks, and each key wakes it. It moves
//     between regimes from run to run (the same code measured 170 to 350 ns per
//     item here), so it says more about the runtime than about the queues; it
//     is kept to show that.
func BenchmarkWorkqueue(b *testing.B) {
	ks, ks64k := keys(keySpace), keys(1<<16)
	for _, c := range []string{"serial", "serial64k", "p1", "p8", "p1-perkey", "p8-perkey"} {
		for _, p := range peers {
			b.Run(p.name+"/"+c, func(b *testing.B) {
				switch c {
				case "serial":
					serial(b, p.new(), ks)
				case "serial64k":
					serial(b, p.new(), ks64k)
				case "p1":
					producerConsumer(b, p.new(), ks, 1, batched)
				case "p8":
					producerConsumer(b, p.new(), ks, 8, batched)
				case "p1-perkey":
					producerConsumer(b, p.new(), ks, 1, perKey)
				case "p8-perkey":
					producerConsumer(b, p.new(), ks, 8, perKey)
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
		hand handBack
	}{{"serial", 0, batched}, {"p1", 1, batched}, {"p8", 8, batched}, {"p1-perkey", 1, perKey}} {
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
						runProducerConsumer(q, ks, c.n, per, c.hand, begin)
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

// handBack is how consumers return keys marked Done to their producers.
type handBack int

const (
	batched handBack = iota // in batches of up to batchSize keys per producer
	perKey                  // each key on its own
)

func producerConsumer(b *testing.B, q queue, ks []string, n int, hand handBack) {
	runProducerConsumer(q, ks, n, b.N, hand, func() {
		b.ReportAllocs()
		b.ResetTimer()
	})
}

// batchSize is the largest batch of keys a consumer hands back to a producer
// at once with n producers and consumers over a key space of size keys. A
// consumer sends a batch when it is full, so up to n*(batch-1) of a producer's
// keys can sit in consumers' partial batches; the size keeps that below the
// keys the producer owns (keys/n), so the producer always has a key that is
// free or queued and the run cannot stall.
func batchSize(keys, n int) int {
	return max(1, min(64, keys/(n*n)))
}

// runProducerConsumer is the pN case for total adds; started, if set, runs
// once the consumers are running, just before the producers start.
func runProducerConsumer(q queue, ks []string, n, total int, hand handBack, started func()) {
	if hand == perKey {
		runProducerConsumerPerKey(q, ks, n, total, started)
		return
	}
	index := indexOf(ks)
	size := batchSize(len(ks), n)
	// free[w] carries producer w's keys that are not outstanding, in batches:
	// key i belongs to producer i%n, which adds it only after a consumer has
	// marked it Done. Each batch is a slice that goes back to spare[w] once
	// its keys are added, for a consumer to fill again, so the run does not
	// allocate once warm.
	free := make([]chan []int, n)
	spare := make([]chan []int, n)
	for w := range n {
		free[w] = make(chan []int, len(ks)+1)
		spare[w] = make(chan []int, len(ks)+1)
	}
	for i := range ks {
		free[i%n] <- []int{i}
	}
	var consumers, producers sync.WaitGroup
	for range n {
		consumers.Go(func() {
			pending := make([][]int, n) // per producer, keys not yet handed back
			for w := range pending {
				pending[w] = make([]int, 0, size)
			}
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				i := index[k] // read-only map: the consumer's "work"
				q.Done(k)
				w := i % n
				pending[w] = append(pending[w], i)
				if len(pending[w]) == size {
					free[w] <- pending[w]
					select {
					case pending[w] = <-spare[w]:
					default:
						pending[w] = make([]int, 0, size)
					}
				}
			}
		})
	}
	if started != nil {
		started()
	}
	for w, count := range shares(total, n) {
		producers.Go(func() {
			for count > 0 {
				batch := <-free[w]
				for _, i := range batch[:min(len(batch), count)] {
					q.Add(ks[i])
				}
				count -= len(batch)
				select {
				case spare[w] <- batch[:0]:
				default:
				}
			}
		})
	}
	producers.Wait()
	q.ShutDown()
	consumers.Wait()
}

// runProducerConsumerPerKey is runProducerConsumer with each key handed back on
// its own over a channel.
func runProducerConsumerPerKey(q queue, ks []string, n, total int, started func()) {
	index := indexOf(ks)
	// free[w] holds producer w's keys that are not outstanding.
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
				i := index[k]
				q.Done(k)
				free[i%n] <- i
			}
		})
	}
	if started != nil {
		started()
	}
	for w, count := range shares(total, n) {
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

// shares splits total adds over n producers.
func shares(total, n int) []int {
	c := make([]int, n)
	for w := range c {
		c[w] = total / n
	}
	c[0] += total % n
	return c
}

// indexOf maps each key to its position in ks.
func indexOf(ks []string) map[string]int {
	index := make(map[string]int, len(ks))
	for i, k := range ks {
		index[k] = i
	}
	return index
}
