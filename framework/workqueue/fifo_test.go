package workqueue

import (
	"runtime"
	"sync"
	"testing"
)

// TestFIFOOrderAcrossOverflow checks that elements come out in push order when
// far more are pushed than the ring holds, so most pass through the overflow
// list, with pops interleaved.
func TestFIFOOrderAcrossOverflow(t *testing.T) {
	t.Parallel()
	var f fifo[int]
	f.init()
	next, want := 0, 0
	for round := range 5 {
		for range 3*ringSize + round*7 {
			f.push(next)
			next++
		}
		if got := f.len(); got != next-want {
			t.Fatalf("round %d: len = %d, want %d", round, got, next-want)
		}
		for range ringSize + round*13 { // leave some behind for the next round
			got, ok := f.tryPop()
			if !ok || got != want {
				t.Fatalf("round %d: pop = %d, %v; want %d", round, got, ok, want)
			}
			want++
		}
	}
	for want < next {
		got, ok := f.tryPop()
		if !ok || got != want {
			t.Fatalf("drain: pop = %d, %v; want %d", got, ok, want)
		}
		want++
	}
	if _, ok := f.tryPop(); ok {
		t.Fatal("pop from an empty FIFO succeeded")
	}
}

// TestFIFOConcurrent pushes from several producers, each in increasing order,
// into a FIFO drained by several blocking consumers, through the overflow list,
// and checks that every element arrives exactly once and that each consumer sees
// each producer's elements in order. Closing wakes the consumers.
func TestFIFOConcurrent(t *testing.T) {
	t.Parallel()
	const producers, consumers, per = 4, 4, 20000
	var f fifo[[2]int] // producer, sequence
	f.init()
	var wg sync.WaitGroup
	seen := make([][]int, consumers)
	for c := range consumers {
		wg.Go(func() {
			last := [producers]int{-1, -1, -1, -1}
			for {
				e, ok := f.pop()
				if !ok {
					return
				}
				if e[1] <= last[e[0]] {
					t.Errorf("consumer %d: producer %d's %d after %d", c, e[0], e[1], last[e[0]])
				}
				last[e[0]] = e[1]
				seen[c] = append(seen[c], e[0]*per+e[1])
			}
		})
	}
	var pw sync.WaitGroup
	for p := range producers {
		pw.Go(func() {
			for i := range per {
				f.push([2]int{p, i})
			}
		})
	}
	pw.Wait()
	for f.len() > 0 { // consumers are draining
		runtime.Gosched()
	}
	f.close()
	wg.Wait()
	count := make([]int, producers*per)
	for _, s := range seen {
		for _, v := range s {
			count[v]++
		}
	}
	for v, n := range count {
		if n != 1 {
			t.Fatalf("element %d received %d times", v, n)
		}
	}
}

// TestFIFOClaimed follows every element's position, as the queue does, through
// the ring and the overflow list, and checks that claimed reports an element
// taken exactly when a pop has returned it.
func TestFIFOClaimed(t *testing.T) {
	t.Parallel()
	var f fifo[int]
	f.init()
	const n = 3*ringSize + 7
	pos := make([]uint64, n)
	f.moved = func(e int, p uint64) { pos[e] = p }
	for e := range n {
		if p, inRing := f.push(e); inRing {
			pos[e] = p
		}
	}
	check := func(popped int) {
		t.Helper()
		for e := range n {
			if got, want := f.claimed(pos[e]), e < popped; got != want {
				t.Fatalf("after %d pops: claimed(element %d at %d) = %v, want %v", popped, e, pos[e], got, want)
			}
		}
	}
	check(0)
	for want := range n {
		e, ok := f.tryPop()
		if !ok || e != want {
			t.Fatalf("pop = %d, %v; want %d", e, ok, want)
		}
		if want%97 == 0 || want > n-3 {
			check(want + 1)
		}
	}
}

// TestFIFOPopStraightFromOverflow sets up what a refill racing with pops leaves
// behind for a moment, an empty ring and a non-empty overflow list, and checks
// that pops take the list's elements in order and report them taken. (A
// blocking pop tries tryPop first, so tryPop covers both.)
func TestFIFOPopStraightFromOverflow(t *testing.T) {
	t.Parallel()
	var f fifo[int]
	f.init()
	pos := make([]uint64, 3)
	f.moved = func(e int, p uint64) { pos[e] = p }
	f.mu.Lock()
	for e := range 3 {
		f.moved(e, posOverflow)
		f.overflow.push(e)
	}
	f.spilled.Store(int32(f.overflow.n)) // as refillLocked publishes it
	f.mu.Unlock()
	for want := range 3 {
		if f.claimed(pos[want]) {
			t.Fatalf("element %d claimed before its pop", want)
		}
		if e, ok := f.tryPop(); !ok || e != want {
			t.Fatalf("pop = %d, %v; want %d", e, ok, want)
		}
		if !f.claimed(pos[want]) {
			t.Fatalf("element %d not claimed after its pop (pos %d)", want, pos[want])
		}
	}
	if f.len() != 0 {
		t.Fatalf("len = %d after draining", f.len())
	}
}
