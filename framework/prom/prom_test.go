package prom_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/prom"
)

func newCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "things_total", Help: "Things."}, []string{"kind"})
}

// gathered returns the value of things_total{kind="a"} as reg exports it, and
// whether it is exported.
func gathered(t *testing.T, reg *prometheus.Registry) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "things_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == "a" {
				return m.GetCounter().GetValue(), true
			}
		}
	}
	return 0, false
}

func TestRegister(t *testing.T) {
	t.Parallel()
	t.Run("the first registration returns the collector", func(t *testing.T) {
		t.Parallel()
		reg := prometheus.NewRegistry()
		c := newCounter()
		if got := prom.Register(reg, c); got != c {
			t.Fatal("Register returned another collector than the one given")
		}
		c.WithLabelValues("a").Add(2)
		if v, ok := gathered(t, reg); !ok || v != 2 {
			t.Fatalf("exported things_total{kind=a} = %v (exported %v), want 2", v, ok)
		}
	})
	t.Run("a second registration shares the first collector", func(t *testing.T) {
		t.Parallel()
		reg := prometheus.NewRegistry()
		first := prom.Register(reg, newCounter())
		second := prom.Register(reg, newCounter())
		if second != first {
			t.Fatal("the second Register did not return the already registered collector")
		}
		second.WithLabelValues("a").Inc()
		first.WithLabelValues("a").Inc()
		if v, _ := gathered(t, reg); v != 2 {
			t.Fatalf("exported things_total{kind=a} = %v, want 2", v)
		}
	})
	t.Run("a nil registry returns the collector", func(t *testing.T) {
		t.Parallel()
		c := newCounter()
		if got := prom.Register(nil, c); got != c {
			t.Fatal("Register(nil, c) did not return c")
		}
	})
	t.Run("another collector type under the same name is returned unregistered", func(t *testing.T) {
		t.Parallel()
		reg := prometheus.NewRegistry()
		counter := prom.Register(reg, newCounter())
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "things_total", Help: "Things."}, []string{"kind"})
		if got := prom.Register(reg, g); got != g {
			t.Fatal("Register did not return the gauge it was given")
		}
		g.WithLabelValues("a").Set(5)
		counter.WithLabelValues("a").Inc()
		if v, _ := gathered(t, reg); v != 1 {
			t.Fatalf("exported things_total{kind=a} = %v, want the counter's 1", v)
		}
	})
}
