package flowcontrol

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric descriptions, under Kubernetes' names (apiserver_flowcontrol_*).
// Converge reports the executing and waiting requests per priority level
// only (Kubernetes adds a flow_schema label).
var (
	descNominal = prometheus.NewDesc("apiserver_flowcontrol_nominal_limit_seats",
		"Nominal number of execution seats configured for each priority level", []string{"priority_level"}, nil)
	descCurrent = prometheus.NewDesc("apiserver_flowcontrol_current_limit_seats",
		"current derived number of execution seats available to each priority level", []string{"priority_level"}, nil)
	descExecuting = prometheus.NewDesc("apiserver_flowcontrol_current_executing_seats",
		"Concurrency (number of seats) occupied by the currently executing requests in the API Priority and Fairness subsystem",
		[]string{"priority_level"}, nil)
	descInQueue = prometheus.NewDesc("apiserver_flowcontrol_current_inqueue_requests",
		"Number of requests currently pending in queues of the API Priority and Fairness subsystem", []string{"priority_level"}, nil)
	descRejected = prometheus.NewDesc("apiserver_flowcontrol_rejected_requests_total",
		"Number of requests rejected by API Priority and Fairness subsystem", []string{"flow_schema", "priority_level", "reason"}, nil)
)

// rejectionKey labels a rejection counter.
type rejectionKey struct{ schema, level, reason string }

// rejections counts rejected requests (rare: a mutex is enough).
type rejections struct {
	mu sync.Mutex
	n  map[rejectionKey]float64
}

func (r *rejections) add(schema, level string, why rejection) {
	reason := "concurrency-limit"
	switch why {
	case rejectQueueFull:
		reason = "queue-full"
	case rejectTimeout:
		reason = "time-out"
	case rejectCancelled:
		reason = "cancelled"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[rejectionKey]float64{}
	}
	r.n[rejectionKey{schema, level, reason}]++
}

// Describe implements prometheus.Collector.
func (c *Controller) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descNominal, descCurrent, descExecuting, descInQueue, descRejected} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Controller) Collect(ch chan<- prometheus.Metric) {
	for name, st := range c.cur.Load().levels {
		ch <- prometheus.MustNewConstMetric(descNominal, prometheus.GaugeValue, float64(st.limit), name)
		ch <- prometheus.MustNewConstMetric(descCurrent, prometheus.GaugeValue, float64(st.limit), name)
		executing, waiting := 0, 0
		if l := st.run; l != nil {
			l.mu.Lock()
			executing, waiting = l.executing, l.waiting
			l.mu.Unlock()
		}
		ch <- prometheus.MustNewConstMetric(descExecuting, prometheus.GaugeValue, float64(executing), name)
		ch <- prometheus.MustNewConstMetric(descInQueue, prometheus.GaugeValue, float64(waiting), name)
	}
	c.rejected.mu.Lock()
	defer c.rejected.mu.Unlock()
	for k, n := range c.rejected.n {
		ch <- prometheus.MustNewConstMetric(descRejected, prometheus.CounterValue, n, k.schema, k.level, k.reason)
	}
}
