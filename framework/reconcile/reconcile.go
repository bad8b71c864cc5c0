package reconcile

import (
	"context"
	"errors"
	"time"

	"github.com/converge-dev/converge/framework/client"
)

// Request names the object to reconcile. It is a key: it carries no event and
// no object state.
type Request struct {
	client.ObjectKey
}

// Result tells the controller when to reconcile the key again. The zero value
// means "not until something changes".
type Result struct {
	// RequeueAfter, if positive, reconciles the key again after this delay.
	RequeueAfter time.Duration
}

// IsZero reports whether r asks for nothing.
func (r Result) IsZero() bool { return r == Result{} }

// Reconciler brings the world in line with the desired state of one object.
// See the package documentation for the retry contract.
type Reconciler interface {
	Reconcile(ctx context.Context, req Request) (Result, error)
}

// Func adapts a function to a Reconciler.
type Func func(ctx context.Context, req Request) (Result, error)

var _ Reconciler = Func(nil)

// Reconcile calls f(ctx, req).
func (f Func) Reconcile(ctx context.Context, req Request) (Result, error) { return f(ctx, req) }

// terminal marks an error that must not be retried.
type terminal struct{ err error }

func (t *terminal) Error() string { return "terminal error: " + t.err.Error() }
func (t *terminal) Unwrap() error { return t.err }

// TerminalError wraps err so that the controller does not retry the key (see the
// package documentation). errors.Is and errors.As see through it.
// TerminalError(nil) returns nil.
func TerminalError(err error) error {
	if err == nil {
		return nil
	}
	return &terminal{err: err}
}

// IsTerminal reports whether err, or an error it wraps, came from TerminalError.
func IsTerminal(err error) bool {
	var t *terminal
	return errors.As(err, &t)
}
