package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/prom"
)

// Results of a scheduling attempt (the result label).
const (
	Scheduled     = "scheduled"
	Unschedulable = "unschedulable"
	Error         = "error"
)

// Queues of the pending pods gauge (the queue label).
const (
	QueueActive        = "active"
	QueueBackoff       = "backoff"
	QueueUnschedulable = "unschedulable"
	QueueGated         = "gated"
)

// PendingCounts returns the number of pods in each queue: active, backoff,
// unschedulable (not counting gated pods) and gated.
type PendingCounts func() (active, backoff, unschedulable, gated int)

// Metrics are the instruments of one scheduler. The zero value is not usable;
// use New.
type Metrics struct {
	attempts   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	preemption prometheus.Counter
	pending    *pendingCollector
}

// New creates the metrics and registers them with reg (nil: not registered,
// still counted). A metric already registered by another scheduler on the
// same registry is shared.
func New(reg prometheus.Registerer, pending PendingCounts) *Metrics {
	m := &Metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "scheduler", Name: "schedule_attempts_total",
			Help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
		}, []string{"result", "profile"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "scheduler", Name: "scheduling_attempt_duration_seconds",
			Help:    "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"result", "profile"}),
		preemption: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "scheduler", Name: "preemption_attempts_total",
			Help: "Total preemption attempts in the cluster till now",
		}),
		pending: &pendingCollector{counts: pending, desc: prometheus.NewDesc("scheduler_pending_pods",
			"Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
			[]string{"queue"}, nil)},
	}
	m.attempts = prom.Register(reg, m.attempts)
	m.duration = prom.Register(reg, m.duration)
	m.preemption = prom.Register(reg, m.preemption)
	if pending != nil {
		m.pending = prom.Register(reg, m.pending)
	}
	return m
}

// ObserveAttempt records one scheduling attempt of profile with result,
// started at start.
func (m *Metrics) ObserveAttempt(profile, result string, start time.Time) {
	if m == nil {
		return
	}
	m.attempts.WithLabelValues(result, profile).Inc()
	m.duration.WithLabelValues(result, profile).Observe(time.Since(start).Seconds())
}

// PreemptionAttempt counts one run of the PostFilter (preemption) plugins.
func (m *Metrics) PreemptionAttempt() {
	if m == nil {
		return
	}
	m.preemption.Inc()
}

// pendingCollector reads the queue lengths when scraped.
type pendingCollector struct {
	counts PendingCounts
	desc   *prometheus.Desc
}

func (c *pendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *pendingCollector) Collect(ch chan<- prometheus.Metric) {
	active, backoff, unschedulable, gated := c.counts()
	for _, q := range []struct {
		name string
		n    int
	}{{QueueActive, active}, {QueueBackoff, backoff}, {QueueUnschedulable, unschedulable}, {QueueGated, gated}} {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(q.n), q.name)
	}
}
