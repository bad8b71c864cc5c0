package workqueue

import "time"

// MetricsProvider creates the metrics of a named queue. It is called once per queue,
// from New. NewPrometheusMetrics returns the Prometheus implementation.
type MetricsProvider interface {
	NewQueueMetrics(name string) QueueMetrics
}

// QueueMetrics are the instruments of one queue. A nil field is not recorded.
// Instruments must be safe for concurrent use, as Prometheus' are.
type QueueMetrics struct {
	// Depth is the number of dirty items: queued, or added again while processing.
	Depth Gauge
	// Adds counts adds that were not deduplicated.
	Adds Counter
	// QueueDuration observes seconds from an item's add to its Get.
	QueueDuration Histogram
	// WorkDuration observes seconds from an item's Get to its Done.
	WorkDuration Histogram
	// Retries counts AddAfter calls, including those made by AddRateLimited.
	Retries Counter
	// UnfinishedWork is the sum of seconds that items being processed have been
	// processing, updated every 500 ms.
	UnfinishedWork Gauge
	// LongestRunningProcessor is the seconds the longest-processing item has been
	// processing, updated every 500 ms.
	LongestRunningProcessor Gauge
}

// Gauge is a value that can go up and down; prometheus.Gauge satisfies it.
type Gauge interface{ Set(float64) }

// Counter is a monotonic count; prometheus.Counter satisfies it.
type Counter interface{ Inc() }

// Histogram records observations; prometheus.Histogram satisfies it.
type Histogram interface{ Observe(float64) }

type noopMetric struct{}

func (noopMetric) Set(float64)     {}
func (noopMetric) Inc()            {}
func (noopMetric) Observe(float64) {}

// unfinishedWorkPeriod is how often the unfinished-work gauges are refreshed.
const unfinishedWorkPeriod = 500 * time.Millisecond

// queueMetrics records a queue's metrics. The timestamps it needs live in the
// items' slots (slotTimes), which are kept under their shard's lock, so
// recording allocates nothing: no per-item map to grow or rehash.
// It exists only when metrics are enabled.
type queueMetrics struct {
	m     QueueMetrics
	clock Clock
	epoch time.Time // timestamps are nanoseconds since epoch, plus one (0 = unset)
}

// slotTimes are the metrics timestamps of one item (see queueMetrics.stamp).
type slotTimes struct {
	addedAt   int64 // when the item became dirty; 0 once handed out
	startedAt int64 // when Get handed it out; 0 once Done
}

func newQueueMetrics(m QueueMetrics, clock Clock) *queueMetrics {
	if m.Depth == nil {
		m.Depth = noopMetric{}
	}
	if m.Adds == nil {
		m.Adds = noopMetric{}
	}
	if m.QueueDuration == nil {
		m.QueueDuration = noopMetric{}
	}
	if m.WorkDuration == nil {
		m.WorkDuration = noopMetric{}
	}
	if m.Retries == nil {
		m.Retries = noopMetric{}
	}
	if m.UnfinishedWork == nil {
		m.UnfinishedWork = noopMetric{}
	}
	if m.LongestRunningProcessor == nil {
		m.LongestRunningProcessor = noopMetric{}
	}
	return &queueMetrics{m: m, clock: clock, epoch: clock.Now()}
}

// stamp returns the time now as a slotTimes timestamp (never 0).
func (qm *queueMetrics) stamp() int64 { return int64(qm.clock.Now().Sub(qm.epoch)) + 1 }

func seconds(from, to int64) float64 { return time.Duration(to - from).Seconds() }

// add records an item becoming dirty; its shard's lock is held.
func (qm *queueMetrics) add(t *slotTimes, depth int) {
	qm.m.Adds.Inc()
	qm.m.Depth.Set(float64(depth))
	t.addedAt = qm.stamp()
}

// get records an item handed out by Get; its shard's lock is held.
func (qm *queueMetrics) get(t *slotTimes, depth int) {
	now := qm.stamp()
	qm.m.Depth.Set(float64(depth))
	if t.addedAt != 0 {
		qm.m.QueueDuration.Observe(seconds(t.addedAt, now))
		t.addedAt = 0
	}
	t.startedAt = now
}

// done records an item marked Done; its shard's lock is held.
func (qm *queueMetrics) done(t *slotTimes) {
	if t.startedAt != 0 {
		qm.m.WorkDuration.Observe(seconds(t.startedAt, qm.stamp()))
		t.startedAt = 0
	}
}

func (qm *queueMetrics) retry() { qm.m.Retries.Inc() }

// unfinished returns the seconds that the processing items of sh have been
// processing, summed and the longest; sh.mu is held.
func unfinished[T comparable](qm *queueMetrics, sh *shard[T]) (total, longest float64) {
	now := qm.stamp()
	for id := range sh.nslots {
		if t := sh.slot(id).times.startedAt; t != 0 {
			d := seconds(t, now)
			total += d
			longest = max(longest, d)
		}
	}
	return total, longest
}

// updateUnfinishedWorkLoop refreshes the unfinished-work gauges every
// unfinishedWorkPeriod until ShutDown.
// The caller creates the timer so that the first period starts at New.
func (q *Typed[T]) updateUnfinishedWorkLoop(timer Timer) {
	defer timer.Stop()
	for {
		select {
		case <-q.stop:
			return
		case <-timer.C():
		}
		var total, longest float64
		for i := range q.shards {
			sh := &q.shards[i]
			sh.mu.Lock()
			t, l := unfinished(q.metrics, sh)
			sh.mu.Unlock()
			total += t
			longest = max(longest, l)
		}
		q.metrics.m.UnfinishedWork.Set(total)
		q.metrics.m.LongestRunningProcessor.Set(longest)
		timer.Reset(unfinishedWorkPeriod)
	}
}
