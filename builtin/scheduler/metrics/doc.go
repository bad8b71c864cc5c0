// Package metrics holds the scheduler's Prometheus metrics, named like
// kube-scheduler's: scheduler_schedule_attempts_total{result,profile},
// scheduler_scheduling_attempt_duration_seconds{result,profile},
// scheduler_pending_pods{queue} and scheduler_preemption_attempts_total.
// They are registered on the registry the scheduler is given (the manager's,
// served on /metrics).
package metrics
