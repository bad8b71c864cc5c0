package workqueue

import "time"

// Options configures a queue. The zero value is valid and means defaults: an unnamed
// queue without metrics, DefaultControllerRateLimiter and the real clock. Options are
// read once by New; changing them afterwards has no effect on the queue.
type Options[T comparable] struct {
	// Name identifies the queue in metrics (the `name` label). Metrics are recorded
	// only when both Name and MetricsProvider are set, so that two unnamed queues
	// never write to the same series.
	Name string

	// RateLimiter decides the delay of AddRateLimited. Nil means
	// DefaultControllerRateLimiter[T]().
	RateLimiter RateLimiter[T]

	// MetricsProvider creates the queue's metrics. Nil means no metrics: the hot path
	// then takes no timestamps and starts no goroutine.
	MetricsProvider MetricsProvider

	// Clock is the time source for delayed adds and metrics. Nil means the real
	// clock; tests pass a fake one.
	Clock Clock
}

// Clock is the time source of a queue.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a started timer that fires once after d.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer created by a Clock, with the semantics of *time.Timer in
// Go 1.23 and later: after Stop or Reset no stale value is received from C.
type Timer interface {
	// C returns the channel the timer fires on.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was active.
	Stop() bool
	// Reset changes the timer to fire after d; it reports whether it was active.
	Reset(d time.Duration) bool
}

// RealClock is the Clock backed by package time.
type RealClock struct{}

var _ Clock = RealClock{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// NewTimer returns a Timer wrapping time.NewTimer(d).
func (RealClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }
