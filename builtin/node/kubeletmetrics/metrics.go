package kubeletmetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/prom"
)

// Operation types of kubelet_pod_worker_duration_seconds, as the kubelet's
// (create: the first sync of a pod, here its sandbox set-up; sync: a status
// sync; kill: a termination).
const (
	WorkerCreate = "create"
	WorkerSync   = "sync"
	WorkerKill   = "kill"
)

// Operation types of the runtime operations, the kubelet's names of the CRI
// calls.
const (
	OpStartContainer  = "start_container"
	OpStopContainer   = "stop_container"
	OpRemoveContainer = "remove_container"
	OpExecSync        = "exec_sync"
	OpPullImage       = "pull_image"
)

// Counts are what the running gauges report at a scrape.
type Counts struct {
	// Pods is the number of pods whose sandbox is set up and not torn down.
	Pods int
	// Containers is the number of containers by state (running, exited,
	// created, unknown), as kubelet_running_containers' container_state.
	Containers map[string]int
}

// Metrics records the node agent's metrics. Create it with New.
type Metrics struct {
	podStart     prometheus.Histogram
	podWorker    *prometheus.HistogramVec
	runtimeOps   *prometheus.CounterVec
	runtimeDur   *prometheus.HistogramVec
	runtimeErrs  *prometheus.CounterVec
	runningPods  *prometheus.Desc
	runningCtrs  *prometheus.Desc
	countRunning func() Counts
}

// New registers the metrics on reg (nil: recorded, not exported); count is
// called at each scrape for the running gauges.
func New(reg prometheus.Registerer, count func() Counts) *Metrics {
	m := &Metrics{
		podStart: prom.Register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "kubelet_pod_start_duration_seconds",
			Help: "Duration in seconds from the node agent seeing a pod for the first time to the pod starting to run",
			Buckets: []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900,
				1200, 1800, 2700, 3600},
		})),
		podWorker: prom.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kubelet_pod_worker_duration_seconds",
			Help:    "Duration in seconds to sync a single pod. Broken down by operation type: create, sync or kill.",
			Buckets: prometheus.DefBuckets,
		}, []string{"operation_type"})),
		runtimeOps: prom.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubelet_runtime_operations_total",
			Help: "Cumulative number of runtime operations by operation type.",
		}, []string{"operation_type"})),
		runtimeDur: prom.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kubelet_runtime_operations_duration_seconds",
			Help:    "Duration in seconds of runtime operations. Broken down by operation type.",
			Buckets: prometheus.ExponentialBuckets(.005, 2.5, 14),
		}, []string{"operation_type"})),
		runtimeErrs: prom.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubelet_runtime_operations_errors_total",
			Help: "Cumulative number of runtime operation errors by operation type.",
		}, []string{"operation_type"})),
		runningPods: prometheus.NewDesc("kubelet_running_pods", "Number of pods that have a running pod sandbox", nil, nil),
		runningCtrs: prometheus.NewDesc("kubelet_running_containers", "Number of containers currently running",
			[]string{"container_state"}, nil),
		countRunning: count,
	}
	for _, op := range []string{OpStartContainer, OpStopContainer, OpRemoveContainer, OpExecSync, OpPullImage} {
		m.runtimeErrs.WithLabelValues(op) // exported at 0 from the start
	}
	if reg != nil && count != nil {
		_ = reg.Register(gauges{m})
	}
	return m
}

// PodStarted records the time from first seeing a pod to it running.
func (m *Metrics) PodStarted(d time.Duration) { m.podStart.Observe(d.Seconds()) }

// PodWorker records one pod worker operation (WorkerCreate, WorkerSync,
// WorkerKill) that began at start.
func (m *Metrics) PodWorker(op string, start time.Time) {
	m.podWorker.WithLabelValues(op).Observe(time.Since(start).Seconds())
}

// RuntimeOperation records one runtime operation (Op*) that began at start
// and ended with err.
func (m *Metrics) RuntimeOperation(op string, start time.Time, err error) {
	m.runtimeOps.WithLabelValues(op).Inc()
	m.runtimeDur.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if err != nil {
		m.runtimeErrs.WithLabelValues(op).Inc()
	}
}

// gauges collects the running gauges from Metrics.countRunning at a scrape.
type gauges struct{ m *Metrics }

func (g gauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- g.m.runningPods
	ch <- g.m.runningCtrs
}

func (g gauges) Collect(ch chan<- prometheus.Metric) {
	c := g.m.countRunning()
	ch <- prometheus.MustNewConstMetric(g.m.runningPods, prometheus.GaugeValue, float64(c.Pods))
	for _, state := range []string{"running", "exited", "created", "unknown"} {
		ch <- prometheus.MustNewConstMetric(g.m.runningCtrs, prometheus.GaugeValue, float64(c.Containers[state]), state)
	}
}
