package idlemem

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/go-logr/logr"
)

// Options tune Run; zero fields take the defaults.
type Options struct {
	// Interval is how often the allocation counter is sampled (100ms).
	Interval time.Duration
	// Quiet is how long the process must allocate less than QuietRate
	// before the memory is returned (300ms).
	Quiet time.Duration
	// QuietRate is the allocation rate, in bytes per second, below which
	// the process counts as quiet (4 MiB/s: an idle `converge up` with
	// its controllers allocates ≈0.3 MiB/s, a burst of requests tens to
	// hundreds of MiB/s).
	QuietRate uint64
	// MinBurst is the least a burst must allocate (besides one live heap's
	// worth) before a quiet spell returns memory (32 MiB): below that the
	// heap did not grow enough to be worth a collection.
	MinBurst uint64
	// Release returns the memory; debug.FreeOSMemory when nil (tests count
	// calls).
	Release func()
}

func (o Options) withDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	if o.Quiet <= 0 {
		o.Quiet = 300 * time.Millisecond
	}
	if o.QuietRate == 0 {
		o.QuietRate = 4 << 20
	}
	if o.MinBurst == 0 {
		o.MinBurst = 32 << 20
	}
	if o.Release == nil {
		o.Release = debug.FreeOSMemory
	}
	return o
}

// Run samples the runtime's heap metrics every Interval until ctx is done,
// returning unused heap memory to the operating system after each burst of
// allocation that a quiet spell follows (see the package documentation).
func Run(ctx context.Context, log logr.Logger, o Options) {
	o = o.withDefaults()
	samples := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(samples)
	d := newDetector(o, samples[0].Value.Uint64())
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		metrics.Read(samples)
		if !d.observe(samples[0].Value.Uint64(), samples[1].Value.Uint64()) {
			continue
		}
		released := samples[2].Value.Uint64()
		t0 := time.Now()
		o.Release()
		metrics.Read(samples)
		d.reset(samples[0].Value.Uint64())
		log.V(1).Info("Returned idle heap memory", "liveBytes", samples[1].Value.Uint64(),
			"releasedBytes", int64(samples[2].Value.Uint64())-int64(released), "took", time.Since(t0))
	}
}

// detector decides from successive samples of the cumulative allocation
// counter when a burst has ended.
type detector struct {
	quietTicks int    // consecutive quiet samples needed
	quietBytes uint64 // allocation per sample below which it is quiet
	minBurst   uint64
	last       uint64 // the counter at the previous sample
	sinceFree  uint64 // allocated since the last release
	quietSeen  int    // consecutive quiet samples so far
}

func newDetector(o Options, allocs uint64) *detector {
	return &detector{
		quietTicks: max(1, int((o.Quiet+o.Interval-1)/o.Interval)),
		quietBytes: uint64(float64(o.QuietRate) * o.Interval.Seconds()),
		minBurst:   o.MinBurst,
		last:       allocs,
	}
}

// observe takes the allocation counter and the live heap (as of the last
// GC) and reports whether to release now: the last Quiet was quiet and
// what was allocated since the last release is a burst of at least the live
// heap and MinBurst.
func (d *detector) observe(allocs, live uint64) bool {
	delta := allocs - d.last
	d.last = allocs
	d.sinceFree += delta
	if delta >= d.quietBytes {
		d.quietSeen = 0
		return false
	}
	d.quietSeen++
	return d.quietSeen >= d.quietTicks && d.sinceFree >= max(d.minBurst, live)
}

// reset starts a new burst after a release at allocation counter allocs.
func (d *detector) reset(allocs uint64) {
	d.last, d.sinceFree, d.quietSeen = allocs, 0, 0
}
