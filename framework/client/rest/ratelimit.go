package rest

import (
	"context"
	"sync"
	"time"
)

// tokenBucket is a token-bucket rate limiter: qps tokens per second, at most
// burst stored.
type tokenBucket struct {
	qps   float64
	burst float64

	mu     sync.Mutex // guards tokens and last
	tokens float64
	last   time.Time
}

func newTokenBucket(qps float32, burst int) *tokenBucket {
	if burst <= 0 {
		burst = max(1, int(qps))
	}
	return &tokenBucket{qps: float64(qps), burst: float64(burst), tokens: float64(burst), last: time.Now()}
}

// Wait blocks until a token is available or ctx ends.
func (b *tokenBucket) Wait(ctx context.Context) error {
	b.mu.Lock()
	now := time.Now()
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.qps)
	b.last = now
	b.tokens-- // reserve, possibly going negative: later callers queue behind
	var wait time.Duration
	if b.tokens < 0 {
		wait = time.Duration(-b.tokens / b.qps * float64(time.Second))
	}
	b.mu.Unlock()
	if wait == 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		b.tokens++ // give the reservation back
		b.mu.Unlock()
		return ctx.Err()
	}
}
