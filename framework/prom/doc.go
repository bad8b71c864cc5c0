// Package prom registers Prometheus collectors the way every metric of the
// framework and the built-in components is registered: on the registry a
// component is given (the manager's, served on /metrics), sharing a collector
// that another instance already registered there instead of failing.
//
// It holds no collectors and no registry of its own.
package prom
