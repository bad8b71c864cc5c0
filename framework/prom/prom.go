package prom

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c with reg and returns the collector to record into:
// c itself, or the collector of the same type already registered under the
// same description (a second controller, queue or scheduler on one registry
// shares its vectors). With a nil reg, or when reg holds a different
// collector under c's name, c is returned unregistered: it still records,
// but is not exported.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
	}
	return c
}
