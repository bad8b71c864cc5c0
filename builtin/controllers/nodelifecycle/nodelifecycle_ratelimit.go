package nodelifecycle

import (
	"sync"
	"time"
)

// zoneLimiter is a token bucket (burst 1) per zone limiting how fast nodes of
// a zone get NoExecute taints, like Kubernetes' per-zone rate-limited
// tainting queues.
type zoneLimiter struct {
	mu      sync.Mutex
	buckets map[string]*bucket // guarded by mu
}

type bucket struct {
	tokens float64
	last   time.Time
}

// neverRetry is how long to wait when the rate is not positive (the zone's
// state may change meanwhile).
const neverRetry = 10 * time.Second

func newZoneLimiter() *zoneLimiter { return &zoneLimiter{buckets: map[string]*bucket{}} }

// take takes a token of zone at rate tokens/s; when none is available it
// returns how long until one is.
func (l *zoneLimiter) take(zone string, rate float64, now time.Time) (bool, time.Duration) {
	if rate <= 0 {
		return false, neverRetry
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[zone]
	if !ok {
		b = &bucket{tokens: 1, last: now}
		l.buckets[zone] = b
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = min(1, b.tokens+el*rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / rate * float64(time.Second))
	return false, wait + 10*time.Millisecond
}

// refund gives back a token taken for a write that failed.
func (l *zoneLimiter) refund(zone string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets[zone]; ok {
		b.tokens = min(1, b.tokens+1)
	}
}
