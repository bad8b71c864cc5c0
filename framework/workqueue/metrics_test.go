package workqueue

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metricValue returns the value of the series of family name labelled queue, from a
// gauge, a counter, or a histogram's sample sum.
func metricValue(t *testing.T, reg *prometheus.Registry, name, queue string) (value float64, count uint64) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labelled := false
			for _, l := range m.GetLabel() {
				labelled = labelled || (l.GetName() == "name" && l.GetValue() == queue)
			}
			if !labelled {
				continue
			}
			switch {
			case m.Gauge != nil:
				return m.GetGauge().GetValue(), 0
			case m.Counter != nil:
				return m.GetCounter().GetValue(), 0
			case m.Histogram != nil:
				return m.GetHistogram().GetSampleSum(), m.GetHistogram().GetSampleCount()
			}
		}
	}
	t.Fatalf("no series %s{name=%q}", name, queue)
	return 0, 0
}

func TestPrometheusMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	clock := newFakeClock()
	provider := NewPrometheusMetrics(reg)
	q := New(Options[string]{
		Name:            "things",
		MetricsProvider: provider,
		Clock:           clock,
		RateLimiter:     NewItemExponentialFailureRateLimiter[string](time.Hour, time.Hour),
	})
	defer q.ShutDown()
	other := New(Options[string]{Name: "other", MetricsProvider: NewPrometheusMetrics(reg)}) // shares collectors
	defer other.ShutDown()
	other.Add("x")

	check := func(name string, want float64) {
		t.Helper()
		if got, _ := metricValue(t, reg, name, "things"); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}

	q.Add("a")
	q.Add("b")
	q.Add("a") // deduplicated: not counted
	check("workqueue_adds_total", 2)
	check("workqueue_depth", 2)

	clock.step(2 * time.Second)
	a, _ := q.Get()
	check("workqueue_depth", 1)
	if sum, n := metricValue(t, reg, "workqueue_queue_duration_seconds", "things"); sum != 2 || n != 1 {
		t.Errorf("queue duration sum %v count %d, want 2 s once", sum, n)
	}
	q.Add("a") // dirty while processing counts as depth
	check("workqueue_depth", 2)
	check("workqueue_adds_total", 3)

	clock.step(3 * time.Second) // the 500 ms gauge timer fires
	eventually(t, "unfinished work gauge", func() bool {
		v, _ := metricValue(t, reg, "workqueue_unfinished_work_seconds", "things")
		return v == 3
	})
	check("workqueue_longest_running_processor_seconds", 3)

	q.Done(a)
	if sum, n := metricValue(t, reg, "workqueue_work_duration_seconds", "things"); sum != 3 || n != 1 {
		t.Errorf("work duration sum %v count %d, want 3 s once", sum, n)
	}
	q.AddRateLimited("c")
	check("workqueue_retries_total", 1)
	if got, _ := metricValue(t, reg, "workqueue_adds_total", "other"); got != 1 {
		t.Errorf("other queue's adds = %v, want 1", got)
	}
}

func TestMetricsNeedName(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	q := New(Options[string]{MetricsProvider: NewPrometheusMetrics(reg)})
	defer q.ShutDown()
	q.Add("a")
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != 0 {
		t.Errorf("an unnamed queue recorded %d metric families", len(families))
	}
}
