package workqueue

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/prom"
)

// NewPrometheusMetrics returns a MetricsProvider whose metrics are registered with
// reg under the names client-go and controller-runtime users know, each labelled with
// the queue's name:
//
//	workqueue_depth                              gauge
//	workqueue_adds_total                         counter
//	workqueue_queue_duration_seconds             histogram
//	workqueue_work_duration_seconds              histogram
//	workqueue_retries_total                      counter
//	workqueue_unfinished_work_seconds            gauge
//	workqueue_longest_running_processor_seconds  gauge
//
// Calling it twice with the same registry shares the already registered collectors.
// If reg holds a different collector under one of these names, that metric is
// recorded but not exported.
func NewPrometheusMetrics(reg prometheus.Registerer) MetricsProvider {
	buckets := prometheus.ExponentialBuckets(10e-9, 10, 12) // 10 ns … 1000 s
	p := &prometheusMetrics{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_depth",
			Help: "Current depth of workqueue",
		}, []string{"name"}),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workqueue_adds_total",
			Help: "Total number of adds handled by workqueue",
		}, []string{"name"}),
		queueDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "workqueue_queue_duration_seconds",
			Help:    "How long in seconds an item stays in workqueue before being requested",
			Buckets: buckets,
		}, []string{"name"}),
		workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "workqueue_work_duration_seconds",
			Help:    "How long in seconds processing an item from workqueue takes.",
			Buckets: buckets,
		}, []string{"name"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workqueue_retries_total",
			Help: "Total number of retries handled by workqueue",
		}, []string{"name"}),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_unfinished_work_seconds",
			Help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
				"Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
		}, []string{"name"}),
		longest: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_longest_running_processor_seconds",
			Help: "How many seconds has the longest running processor for workqueue been running.",
		}, []string{"name"}),
	}
	p.depth = prom.Register(reg, p.depth)
	p.adds = prom.Register(reg, p.adds)
	p.queueDuration = prom.Register(reg, p.queueDuration)
	p.workDuration = prom.Register(reg, p.workDuration)
	p.retries = prom.Register(reg, p.retries)
	p.unfinished = prom.Register(reg, p.unfinished)
	p.longest = prom.Register(reg, p.longest)
	return p
}

type prometheusMetrics struct {
	depth         *prometheus.GaugeVec
	adds          *prometheus.CounterVec
	queueDuration *prometheus.HistogramVec
	workDuration  *prometheus.HistogramVec
	retries       *prometheus.CounterVec
	unfinished    *prometheus.GaugeVec
	longest       *prometheus.GaugeVec
}

// NewQueueMetrics returns the children of the metric vectors for queue name.
func (p *prometheusMetrics) NewQueueMetrics(name string) QueueMetrics {
	return QueueMetrics{
		Depth:                   p.depth.WithLabelValues(name),
		Adds:                    p.adds.WithLabelValues(name),
		QueueDuration:           p.queueDuration.WithLabelValues(name),
		WorkDuration:            p.workDuration.WithLabelValues(name),
		Retries:                 p.retries.WithLabelValues(name),
		UnfinishedWork:          p.unfinished.WithLabelValues(name),
		LongestRunningProcessor: p.longest.WithLabelValues(name),
	}
}
