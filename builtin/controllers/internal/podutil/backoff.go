package podutil

import (
	"sync"
	"time"
)

// Backoff is a per-key exponential backoff (client-go flowcontrol.Backoff
// semantics): Next starts a key at the initial delay and doubles it on every
// further call up to the maximum; a key left alone for twice the maximum
// starts over. It is safe for concurrent use.
type Backoff struct {
	initial, max time.Duration

	mu sync.Mutex
	m  map[string]backoffEntry // guarded by mu
}

type backoffEntry struct {
	delay time.Duration
	last  time.Time
}

// NewBackoff returns a backoff from initial doubling up to maxDelay.
func NewBackoff(initial, maxDelay time.Duration) *Backoff {
	return &Backoff{initial: initial, max: max(initial, maxDelay), m: map[string]backoffEntry{}}
}

// Next records an attempt for key at now and lengthens its delay.
func (b *Backoff) Next(key string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.m[key]
	switch {
	case !ok || now.Sub(e.last) > 2*b.max:
		e.delay = b.initial
	default:
		e.delay = min(2*e.delay, b.max)
	}
	e.last = now
	b.m[key] = e
	// Forget keys nobody used for long, so the map does not grow forever.
	for k, old := range b.m {
		if now.Sub(old.last) > 2*b.max {
			delete(b.m, k)
		}
	}
}

// InBackoff reports whether key's last attempt is more recent than its
// delay, and how long is left.
func (b *Backoff) InBackoff(key string, now time.Time) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.m[key]
	if !ok {
		return false, 0
	}
	if left := e.last.Add(e.delay).Sub(now); left > 0 {
		return true, left
	}
	return false, 0
}
