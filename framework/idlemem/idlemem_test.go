package idlemem

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestDetector feeds the detector allocation counters sampled every 100ms
// (quiet below 400 KB a sample, 2 quiet samples needed, bursts of 32 MiB).
func TestDetector(t *testing.T) {
	const mib = 1 << 20
	o := Options{Interval: 100 * time.Millisecond, Quiet: 200 * time.Millisecond, QuietRate: 4 * mib, MinBurst: 32 * mib}.withDefaults()
	type sample struct{ alloc, live uint64 } // alloc: allocated during the sample
	cases := []struct {
		name    string
		samples []sample
		want    []bool
	}{
		{"idle from the start", []sample{{0, 10 * mib}, {100, 10 * mib}, {1000, 10 * mib}, {0, 10 * mib}},
			[]bool{false, false, false, false}},
		{"burst, then quiet", []sample{{40 * mib, 10 * mib}, {0, 10 * mib}, {0, 10 * mib}, {0, 10 * mib}},
			[]bool{false, false, true, false}},
		{"burst smaller than MinBurst", []sample{{20 * mib, 1 * mib}, {0, 1 * mib}, {0, 1 * mib}, {0, 1 * mib}},
			[]bool{false, false, false, false}},
		{"burst smaller than the live heap", []sample{{40 * mib, 60 * mib}, {0, 60 * mib}, {0, 60 * mib}},
			[]bool{false, false, false}},
		{"small bursts add up", []sample{{20 * mib, 1}, {0, 1}, {0, 1}, {20 * mib, 1}, {0, 1}, {0, 1}},
			[]bool{false, false, false, false, false, true}},
		{"a busy sample restarts the quiet spell", []sample{{40 * mib, 1}, {0, 1}, {1 * mib, 1}, {0, 1}, {0, 1}},
			[]bool{false, false, false, false, true}},
		{"allocation below the rate is quiet", []sample{{40 * mib, 1}, {300 << 10, 1}, {300 << 10, 1}},
			[]bool{false, false, true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			counter := uint64(1 << 30)
			d := newDetector(o, counter)
			for i, s := range c.samples {
				counter += s.alloc
				got := d.observe(counter, s.live)
				if got != c.want[i] {
					t.Fatalf("sample %d (%+v): release %v, want %v", i, s, got, c.want[i])
				}
				if got {
					d.reset(counter)
				}
			}
		})
	}
}

var sink [][]byte

// TestRunReturnsMemoryAfterABurst runs the loop on this process's own heap:
// a burst of garbage, then quiet, returns the heap's free memory; quiet
// without a new burst returns nothing more. (That nothing is returned while
// the process keeps allocating is TestDetector's: on a loaded machine this
// process may be descheduled long enough mid-burst to look quiet.)
func TestRunReturnsMemoryAfterABurst(t *testing.T) {
	debug.FreeOSMemory()
	var releases atomic.Int32
	released := make(chan struct{}, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, testr.New(t), Options{Interval: 20 * time.Millisecond, Quiet: 60 * time.Millisecond, Release: func() {
			releases.Add(1)
			debug.FreeOSMemory()
			released <- struct{}{}
		}})
	}()
	defer func() { cancel(); <-done }()

	for range 128 { // a burst of 128 MiB
		sink = append(sink[:0], make([]byte, 1<<20))
	}
	sink = nil
	heldBefore := heapHeld()
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("no release within 5s of the burst's end")
	}
	if after := heapHeld(); after >= heldBefore {
		t.Errorf("heap memory held by the process: %d bytes before the release, %d after", heldBefore, after)
	}
	// Quiet: no further release without a new burst.
	time.Sleep(100 * time.Millisecond)
	n := releases.Load()
	time.Sleep(300 * time.Millisecond)
	if m := releases.Load(); m != n {
		t.Fatalf("released %d more times while quiet", m-n)
	}
	runtime.KeepAlive(sink)
}

// heapHeld is the heap memory the process holds from the OS: mapped heap
// spans not released.
func heapHeld() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64() + s[2].Value.Uint64()
}
