package filters

import (
	"net/http"

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
	// RetryAfterSeconds is sent with 429 (default 1).
	RetryAfterSeconds int
}

// WithMaxInFlight answers 429 Too Many Requests, with Retry-After, when the
// request's budget is exhausted. Long-running requests and members of
// system:masters are never limited.
func WithMaxInFlight(next http.Handler, opts MaxInFlightOptions) http.Handler {
	if opts.Mutating <= 0 && opts.ReadOnly <= 0 {
		return next
	}
	retry := opts.RetryAfterSeconds
	if retry <= 0 {
		retry = 1
	}
	var mutating, readOnly chan struct{}
	if opts.Mutating > 0 {
		mutating = make(chan struct{}, opts.Mutating)
	}
	if opts.ReadOnly > 0 {
		readOnly = make(chan struct{}, opts.ReadOnly)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ri, ok := RequestInfoFrom(r.Context())
		if !ok {
			ri = NewRequestInfo(r)
		}
		if ri.IsLongRunning() {
			next.ServeHTTP(w, r)
			return
		}
		if u, ok := UserFrom(r.Context()); ok && u.InGroup(GroupMasters) {
			next.ServeHTTP(w, r)
			return
		}
		sem := mutating
		if ri.IsReadOnly() {
			sem = readOnly
		}
		if sem == nil {
			next.ServeHTTP(w, r)
			return
		}
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
			next.ServeHTTP(w, r)
		default:
			WriteStatus(w, apierrors.NewTooManyRequests("Too many requests, please try again later.", retry))
		}
	})
}
