package controller

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/prom"
)

// Result label values of controller_runtime_reconcile_total.
const (
	labelSuccess      = "success"
	labelError        = "error"
	labelRequeueAfter = "requeue_after"
)

// metrics are the collectors shared by all controllers of one registry.
type metrics struct {
	total          *prometheus.CounterVec
	errors         *prometheus.CounterVec
	terminalErrors *prometheus.CounterVec
	panics         *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	workers        *prometheus.GaugeVec
	maxConcurrent  *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_total",
			Help: "Total number of reconciliations per controller",
		}, []string{"controller", "result"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_errors_total",
			Help: "Total number of reconciliation errors per controller",
		}, []string{"controller"}),
		terminalErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_terminal_reconcile_errors_total",
			Help: "Total number of terminal reconciliation errors per controller",
		}, []string{"controller"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_panics_total",
			Help: "Total number of reconciliation panics per controller",
		}, []string{"controller"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "controller_runtime_reconcile_time_seconds",
			Help: "Length of time per reconciliation per controller",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
				1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60},
		}, []string{"controller"}),
		workers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "controller_runtime_active_workers",
			Help: "Number of currently used workers per controller",
		}, []string{"controller"}),
		maxConcurrent: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "controller_runtime_max_concurrent_reconciles",
			Help: "Maximum number of concurrent reconciles per controller",
		}, []string{"controller"}),
	}
	m.total = prom.Register(reg, m.total)
	m.errors = prom.Register(reg, m.errors)
	m.terminalErrors = prom.Register(reg, m.terminalErrors)
	m.panics = prom.Register(reg, m.panics)
	m.duration = prom.Register(reg, m.duration)
	m.workers = prom.Register(reg, m.workers)
	m.maxConcurrent = prom.Register(reg, m.maxConcurrent)
	return m
}

// forController initialises the series of one controller so that they are
// exported (as zero) before the first reconcile.
func (m *metrics) forController(name string, maxConcurrent int) {
	for _, r := range []string{labelSuccess, labelError, labelRequeueAfter} {
		m.total.WithLabelValues(name, r)
	}
	m.errors.WithLabelValues(name)
	m.terminalErrors.WithLabelValues(name)
	m.panics.WithLabelValues(name)
	m.workers.WithLabelValues(name).Set(0)
	m.maxConcurrent.WithLabelValues(name).Set(float64(maxConcurrent))
}
