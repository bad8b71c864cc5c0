package flowcontrol

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric descriptions, under Kubernetes' names (apiserver_flowcontrol_*).
// Converge reports the executing and waiting requests per priority level
// only (Kubernetes adds a flow_schema label).
var (
	levelLabel  = []string{"priority_level"}
	descNominal = prometheus.NewDesc("apiserver_flowcontrol_nominal_limit_seats",
		"Nominal number of execution seats configured for each priority level", levelLabel, nil)
	descCurrent = prometheus.NewDesc("apiserver_flowcontrol_current_limit_seats",
		"current derived number of execution seats available to each priority level", levelLabel, nil)
	descLower = prometheus.NewDesc("apiserver_flowcontrol_lower_limit_seats",
		"Configured lower bound on number of execution seats available to each priority level", levelLabel, nil)
	descUpper = prometheus.NewDesc("apiserver_flowcontrol_upper_limit_seats",
		"Configured upper bound on number of execution seats available to each priority level", levelLabel, nil)
	descDemandHigh = prometheus.NewDesc("apiserver_flowcontrol_demand_seats_high_watermark",
		"High watermark, over last adjustment period, of demand_seats", levelLabel, nil)
	descDemandAvg = prometheus.NewDesc("apiserver_flowcontrol_demand_seats_average",
		"Time-weighted average, over last adjustment period, of demand_seats", levelLabel, nil)
	descDemandStdev = prometheus.NewDesc("apiserver_flowcontrol_demand_seats_stdev",
		"Time-weighted standard deviation, over last adjustment period, of demand_seats", levelLabel, nil)
	descDemandSmoothed = prometheus.NewDesc("apiserver_flowcontrol_demand_seats_smoothed",
		"Smoothed seat demands", levelLabel, nil)
	descTarget = prometheus.NewDesc("apiserver_flowcontrol_target_seats", "Seat allocation targets", levelLabel, nil)
	descFair   = prometheus.NewDesc("apiserver_flowcontrol_seat_fair_frac",
		"Fair fraction of server's concurrency to allocate to each priority level that can use it", nil, nil)
	descInQueueSeats = prometheus.NewDesc("apiserver_flowcontrol_current_inqueue_seats",
		"Number of seats currently pending in queues of the API Priority and Fairness subsystem", levelLabel, nil)
	descExecuting = prometheus.NewDesc("apiserver_flowcontrol_current_executing_seats",
		"Concurrency (number of seats) occupied by the currently executing requests in the API Priority and Fairness subsystem",
		[]string{"priority_level"}, nil)
	descInQueue = prometheus.NewDesc("apiserver_flowcontrol_current_inqueue_requests",
		"Number of requests currently pending in queues of the API Priority and Fairness subsystem", []string{"priority_level"}, nil)
	descRejected = prometheus.NewDesc("apiserver_flowcontrol_rejected_requests_total",
		"Number of requests rejected by API Priority and Fairness subsystem", []string{"flow_schema", "priority_level", "reason"}, nil)
)

// newEstimatedSeats returns apiserver_flowcontrol_work_estimated_seats as
// Kubernetes defines it: the seats (the larger of initial and final) of each
// request that takes seats, by priority level and flow schema, in buckets up
// to the widest request (10 seats).
func newEstimatedSeats() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_flowcontrol_work_estimated_seats",
		Help:    "Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness",
		Buckets: []float64{1, 2, 4, 10},
	}, []string{"priority_level", "flow_schema"})
}

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
	for _, d := range []*prometheus.Desc{descNominal, descCurrent, descLower, descUpper, descDemandHigh, descDemandAvg,
		descDemandStdev, descDemandSmoothed, descTarget, descFair, descExecuting, descInQueue, descInQueueSeats, descRejected} {
		ch <- d
	}
	c.estimatedSeats.Describe(ch)
}

// levelMetrics is what Collect reports of a level.
type levelMetrics struct {
	name string
	st   *levelState
	b    borrowState
}

// Collect implements prometheus.Collector.
func (c *Controller) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	s := c.cur.Load()
	fair := c.fairProp
	levels := make([]levelMetrics, 0, len(s.levels))
	for name, st := range s.levels {
		levels = append(levels, levelMetrics{name: name, st: st, b: *st.borrow})
	}
	c.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, name string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, name)
	}
	ch <- prometheus.MustNewConstMetric(descFair, prometheus.GaugeValue, fair)
	for _, m := range levels {
		st, b := m.st, m.b
		gauge(descNominal, float64(st.nominal), m.name)
		gauge(descLower, float64(st.lower), m.name)
		gauge(descUpper, float64(st.upper), m.name)
		gauge(descCurrent, float64(b.current), m.name)
		gauge(descDemandHigh, float64(b.stats.highWatermark), m.name)
		gauge(descDemandAvg, b.stats.avg, m.name)
		gauge(descDemandStdev, b.stats.stdDev, m.name)
		gauge(descDemandSmoothed, b.stats.smoothed, m.name)
		gauge(descTarget, b.target, m.name)
		n := st.run.counters()
		gauge(descExecuting, float64(n.seats), m.name)
		gauge(descInQueue, float64(n.waiting), m.name)
		gauge(descInQueueSeats, float64(n.seatsWaiting), m.name)
	}
	c.estimatedSeats.Collect(ch)
	c.rejected.mu.Lock()
	defer c.rejected.mu.Unlock()
	for k, n := range c.rejected.n {
		ch <- prometheus.MustNewConstMetric(descRejected, prometheus.CounterValue, n, k.schema, k.level, k.reason)
	}
}
