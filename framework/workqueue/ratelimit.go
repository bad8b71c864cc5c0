package workqueue

import (
	"math"
	"sync"
	"time"
)

// RateLimiter decides how long an item waits before it is retried. Implementations
// are safe for concurrent use.
type RateLimiter[T comparable] interface {
	// When records a failure of item and returns how long to wait before retrying it.
	When(item T) time.Duration
	// Forget clears item's failure history, typically after it was processed
	// successfully. It must be called even when the item is not retried any more.
	Forget(item T)
	// NumRequeues returns how many failures of item are being tracked.
	NumRequeues(item T) int
}

// AddRateLimited adds item after the delay its rate limiter returns (see AddAfter).
func (q *Typed[T]) AddRateLimited(item T) {
	q.AddAfter(item, q.rateLimiter.When(item))
}

// Forget tells the rate limiter that item is done being retried: its backoff starts
// from the beginning next time. It does not remove the item from the queue.
func (q *Typed[T]) Forget(item T) { q.rateLimiter.Forget(item) }

// NumRequeues returns how many times item has been rate-limited since it was last
// forgotten.
func (q *Typed[T]) NumRequeues(item T) int { return q.rateLimiter.NumRequeues(item) }

// DefaultControllerRateLimiter returns the limiter controllers use unless told
// otherwise: the larger of a per-item exponential backoff (5 ms doubling up to 1000 s)
// and an overall token bucket (10 adds per second, bursts of 100).
func DefaultControllerRateLimiter[T comparable]() RateLimiter[T] {
	return NewMaxOfRateLimiter(
		NewItemExponentialFailureRateLimiter[T](5*time.Millisecond, 1000*time.Second),
		NewBucketRateLimiter[T](10, 100),
	)
}

// ItemExponentialFailureRateLimiter waits base·2^n before the (n+1)th retry of an
// item, capped at max. Create it with NewItemExponentialFailureRateLimiter.
type ItemExponentialFailureRateLimiter[T comparable] struct {
	base, max time.Duration

	mu       sync.Mutex
	failures map[T]int
}

// NewItemExponentialFailureRateLimiter returns a per-item exponential backoff from
// base to max. Non-positive base or max default to 5 ms and 1000 s.
func NewItemExponentialFailureRateLimiter[T comparable](base, max time.Duration) *ItemExponentialFailureRateLimiter[T] {
	if base <= 0 {
		base = 5 * time.Millisecond
	}
	if max <= 0 {
		max = 1000 * time.Second
	}
	return &ItemExponentialFailureRateLimiter[T]{base: base, max: max, failures: make(map[T]int)}
}

// When returns base·2^failures (capped at max) and counts one more failure.
func (r *ItemExponentialFailureRateLimiter[T]) When(item T) time.Duration {
	r.mu.Lock()
	exp := r.failures[item]
	r.failures[item] = exp + 1
	r.mu.Unlock()
	return backoff(r.base, r.max, exp)
}

// backoff returns base·2^exp, or max if that is larger, without overflowing.
func backoff(base, max time.Duration, exp int) time.Duration {
	if exp >= 63 || base > max>>exp {
		return max
	}
	return base << exp
}

// Forget clears item's failure count.
func (r *ItemExponentialFailureRateLimiter[T]) Forget(item T) {
	r.mu.Lock()
	delete(r.failures, item)
	r.mu.Unlock()
}

// NumRequeues returns item's failure count.
func (r *ItemExponentialFailureRateLimiter[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// BucketRateLimiter limits the overall retry rate with a token bucket shared by all
// items: up to burst retries pass at once, then qps per second. Each When reserves a
// token and returns how long until that token exists. Create it with
// NewBucketRateLimiter.
type BucketRateLimiter[T comparable] struct {
	qps   float64
	burst float64
	now   func() time.Time

	mu     sync.Mutex
	tokens float64 // negative when reservations are ahead of the refill
	last   time.Time
}

// NewBucketRateLimiter returns a token bucket refilled at qps tokens per second and
// holding at most burst tokens; it starts full. qps <= 0 or +Inf means no limit;
// burst < 1 means 1.
func NewBucketRateLimiter[T comparable](qps float64, burst int) *BucketRateLimiter[T] {
	return newBucketRateLimiter[T](qps, burst, time.Now)
}

func newBucketRateLimiter[T comparable](qps float64, burst int, now func() time.Time) *BucketRateLimiter[T] {
	b := float64(max(burst, 1))
	return &BucketRateLimiter[T]{qps: qps, burst: b, now: now, tokens: b, last: now()}
}

// When takes a token and returns how long until it is available; 0 while the bucket
// has tokens.
func (r *BucketRateLimiter[T]) When(T) time.Duration {
	if r.qps <= 0 || math.IsInf(r.qps, 1) {
		return 0
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if elapsed := now.Sub(r.last); elapsed > 0 {
		r.tokens = min(r.burst, r.tokens+elapsed.Seconds()*r.qps)
		r.last = now
	}
	r.tokens--
	if r.tokens >= 0 {
		return 0
	}
	return time.Duration(math.Ceil(-r.tokens / r.qps * float64(time.Second)))
}

// Forget does nothing: the bucket does not track items.
func (r *BucketRateLimiter[T]) Forget(T) {}

// NumRequeues returns 0: the bucket does not track items.
func (r *BucketRateLimiter[T]) NumRequeues(T) int { return 0 }

// MaxOfRateLimiter combines limiters: the delay is the longest any of them returns,
// NumRequeues the largest count, and Forget reaches all of them.
type MaxOfRateLimiter[T comparable] struct {
	limiters []RateLimiter[T]
}

// NewMaxOfRateLimiter returns a limiter taking the maximum of limiters. Every limiter
// sees every When call, so all of them record the failure.
func NewMaxOfRateLimiter[T comparable](limiters ...RateLimiter[T]) *MaxOfRateLimiter[T] {
	return &MaxOfRateLimiter[T]{limiters: limiters}
}

// When returns the longest delay of the limiters.
func (r *MaxOfRateLimiter[T]) When(item T) time.Duration {
	var d time.Duration
	for _, l := range r.limiters {
		d = max(d, l.When(item))
	}
	return d
}

// Forget forgets item in every limiter.
func (r *MaxOfRateLimiter[T]) Forget(item T) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

// NumRequeues returns the largest count of the limiters.
func (r *MaxOfRateLimiter[T]) NumRequeues(item T) int {
	n := 0
	for _, l := range r.limiters {
		n = max(n, l.NumRequeues(item))
	}
	return n
}

var (
	_ RateLimiter[string] = (*ItemExponentialFailureRateLimiter[string])(nil)
	_ RateLimiter[string] = (*BucketRateLimiter[string])(nil)
	_ RateLimiter[string] = (*MaxOfRateLimiter[string])(nil)
)
