package filters

import (
	"fmt"
	"net/http"
	"sync"

	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// MaxInFlightOptions bound concurrent requests; zero means unlimited.
type MaxInFlightOptions struct {
	// Mutating bounds requests that may change state (create, update, patch,
	// delete, ...).
	Mutating int
	// ReadOnly bounds get and list requests (watches and other long-running
	// requests are not counted).
	ReadOnly int
	// PerUserPercent is the share of each budget one user may hold at once, so
	// that one busy client cannot starve the others (default 50; at least one
	// request; 100 turns the per-user share off).
	PerUserPercent int
	// MaxWatchesPerUser bounds the open watches of one user (0: unlimited).
	MaxWatchesPerUser int
	// RetryAfterSeconds is sent with 429 (default 1).
	RetryAfterSeconds int
}

func (o MaxInFlightOptions) enabled() bool {
	return o.Mutating > 0 || o.ReadOnly > 0 || o.MaxWatchesPerUser > 0
}

// budget is one bounded class of requests: a total and a per-user share.
type budget struct {
	total, perUser int // 0: unlimited

	mu     sync.Mutex
	used   int
	byUser map[string]int
}

func newBudget(total, perUser int) *budget {
	if total <= 0 && perUser <= 0 {
		return nil
	}
	return &budget{total: total, perUser: perUser, byUser: map[string]int{}}
}

// acquire takes a slot for user; the reason is empty on success.
func (b *budget) acquire(user string) (reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total > 0 && b.used >= b.total {
		return "the server's budget is exhausted"
	}
	if b.perUser > 0 && b.byUser[user] >= b.perUser {
		return fmt.Sprintf("user %q holds its share (%d) of the budget", user, b.perUser)
	}
	b.used++
	b.byUser[user]++
	return ""
}

func (b *budget) release(user string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used--
	if b.byUser[user]--; b.byUser[user] <= 0 {
		delete(b.byUser, user)
	}
}

// share is a user's part of total at percent (at least 1; 0 when unlimited).
func share(total, percent int) int {
	if total <= 0 || percent >= 100 {
		return 0
	}
	return max(1, total*percent/100)
}

// WithMaxInFlight answers 429 Too Many Requests, with Retry-After, when the
// request's budget is exhausted, when its user already holds its share of that
// budget, or when a watch would exceed its user's watch limit. Other
// long-running requests (logs, exec, ...) and members of system:masters are
// never limited. Users are told apart by name (all anonymous requests share
// one).
func WithMaxInFlight(next http.Handler, opts MaxInFlightOptions) http.Handler {
	if !opts.enabled() {
		return next
	}
	retry := opts.RetryAfterSeconds
	if retry <= 0 {
		retry = 1
	}
	percent := opts.PerUserPercent
	if percent <= 0 {
		percent = 50
	}
	mutating := newBudget(opts.Mutating, share(opts.Mutating, percent))
	readOnly := newBudget(opts.ReadOnly, share(opts.ReadOnly, percent))
	watches := newBudget(0, opts.MaxWatchesPerUser)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ri, ok := RequestInfoFrom(r.Context())
		if !ok {
			ri = NewRequestInfo(r)
		}
		u, _ := UserFrom(r.Context())
		if u.InGroup(GroupMasters) {
			next.ServeHTTP(w, r)
			return
		}
		var b *budget
		switch {
		case ri.IsResourceRequest && ri.Verb == "watch":
			b = watches
		case ri.IsLongRunning():
		case ri.IsReadOnly():
			b = readOnly
		default:
			b = mutating
		}
		if b == nil {
			next.ServeHTTP(w, r)
			return
		}
		name := UserAnonymous
		if u != nil {
			name = u.Name
		}
		if reason := b.acquire(name); reason != "" {
			w.Header().Set("X-Converge-Throttled", reason)
			WriteStatus(w, apierrors.NewTooManyRequests("Too many requests, please try again later.", retry))
			return
		}
		defer b.release(name)
		next.ServeHTTP(w, r)
	})
}
