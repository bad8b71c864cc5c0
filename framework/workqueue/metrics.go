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

// queueMetrics records a queue's metrics. Each shard has its own, holding the
// timestamps of that shard's items; its methods other than retry are called with
// the shard's lock held, so its maps need no lock of their own. The instruments
// are shared. It exists only when metrics are enabled.
type queueMetrics[T comparable] struct {
	m     QueueMetrics
	clock Clock

	addTimes   map[T]time.Time // when each dirty item was added
	startTimes map[T]time.Time // when each processing item was handed out
}

func newQueueMetrics[T comparable](m QueueMetrics, clock Clock) *queueMetrics[T] {
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
	return &queueMetrics[T]{
		m:          m,
		clock:      clock,
		addTimes:   make(map[T]time.Time),
		startTimes: make(map[T]time.Time),
	}
}

func (qm *queueMetrics[T]) add(item T, depth int) {
	qm.m.Adds.Inc()
	qm.m.Depth.Set(float64(depth))
	qm.addTimes[item] = qm.clock.Now()
}

func (qm *queueMetrics[T]) get(item T, depth int) {
	now := qm.clock.Now()
	qm.m.Depth.Set(float64(depth))
	if t, ok := qm.addTimes[item]; ok {
		qm.m.QueueDuration.Observe(now.Sub(t).Seconds())
		delete(qm.addTimes, item)
	}
	qm.startTimes[item] = now
}

func (qm *queueMetrics[T]) done(item T) {
	if t, ok := qm.startTimes[item]; ok {
		qm.m.WorkDuration.Observe(qm.clock.Now().Sub(t).Seconds())
		delete(qm.startTimes, item)
	}
}

func (qm *queueMetrics[T]) retry() { qm.m.Retries.Inc() }

// unfinished returns the seconds that processing items have been processing,
// summed and the longest.
func (qm *queueMetrics[T]) unfinished() (total, longest float64) {
	now := qm.clock.Now()
	for _, t := range qm.startTimes {
		d := now.Sub(t).Seconds()
		total += d
		longest = max(longest, d)
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
			t, l := sh.metrics.unfinished()
			sh.mu.Unlock()
			total += t
			longest = max(longest, l)
		}
		q.metrics.m.UnfinishedWork.Set(total)
		q.metrics.m.LongestRunningProcessor.Set(longest)
		timer.Reset(unfinishedWorkPeriod)
	}
}
