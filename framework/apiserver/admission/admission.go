package admission

import (
	"context"
	"errors"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/review"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// Operation is what a request does to an object, as AdmissionReview names it.
type Operation = review.Operation

// Operations.
const (
	Create  = review.Create
	Update  = review.Update
	Delete  = review.Delete
	Connect = review.Connect
)

// Attributes describe one request under admission.
type Attributes struct {
	Operation   Operation
	Kind        api.GroupVersionKind
	Resource    api.GroupVersionResource
	Subresource string
	Namespace   string
	Name        string
	// Object is the new object (nil for delete). Mutating plugins change it in
	// place or replace it.
	Object map[string]any
	// OldObject is the stored object (update and delete).
	OldObject map[string]any
	// Namespaced is whether the resource is namespaced.
	Namespaced bool
	DryRun     bool
	// User made the request (nil for unauthenticated in-process callers).
	User *filters.User
}

// Mutator may change a.Object.
type Mutator interface {
	Admit(ctx context.Context, a *Attributes) error
}

// Validator accepts or refuses a request; it must not change it.
type Validator interface {
	Validate(ctx context.Context, a *Attributes) error
}

// MutatorFunc adapts a function to Mutator.
type MutatorFunc func(ctx context.Context, a *Attributes) error

// Admit implements Mutator.
func (f MutatorFunc) Admit(ctx context.Context, a *Attributes) error { return f(ctx, a) }

// ValidatorFunc adapts a function to Validator.
type ValidatorFunc func(ctx context.Context, a *Attributes) error

// Validate implements Validator.
func (f ValidatorFunc) Validate(ctx context.Context, a *Attributes) error { return f(ctx, a) }

var (
	_ Mutator   = MutatorFunc(nil)
	_ Validator = ValidatorFunc(nil)
)

// Chain runs Mutators in order, then Validators in order. The zero value admits
// everything.
type Chain struct {
	Mutators   []Mutator
	Validators []Validator
}

// Admit runs every mutator; the first error stops the chain.
func (c *Chain) Admit(ctx context.Context, a *Attributes) error {
	for _, m := range c.Mutators {
		if err := m.Admit(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

type warningsKey struct{}

// WithWarnings returns ctx carrying sink, which receives the warnings admission
// plugins add (AddWarning; webhook responses' warnings): the API server sends
// them to the client as Warning headers.
func WithWarnings(ctx context.Context, sink func(text string)) context.Context {
	return context.WithValue(ctx, warningsKey{}, sink)
}

// AddWarning sends text to the warning sink of ctx, if it has one.
func AddWarning(ctx context.Context, text string) {
	if sink, ok := ctx.Value(warningsKey{}).(func(string)); ok && sink != nil {
		sink(text)
	}
}

type webhookObserverKey struct{}

// WebhookObserver is told about each webhook call: the webhook's name, whether
// it is a mutating one, the operation, whether the call rejected the request
// (a denial, or a failure under failurePolicy Fail) and how long it took.
type WebhookObserver func(name string, mutating bool, op Operation, rejected bool, took time.Duration)

// WithWebhookObserver returns ctx carrying o, which the Webhooks plugin tells
// about each call it makes (the API server's latency metrics).
func WithWebhookObserver(ctx context.Context, o WebhookObserver) context.Context {
	return context.WithValue(ctx, webhookObserverKey{}, o)
}

// observeWebhook tells the observer of ctx, if any, about a webhook call.
func observeWebhook(ctx context.Context, name string, mutating bool, op Operation, rejected bool, took time.Duration) {
	if o, ok := ctx.Value(webhookObserverKey{}).(WebhookObserver); ok && o != nil {
		o(name, mutating, op, rejected, took)
	}
}

// ChangeReporter is implemented by Mutators that know whether they changed
// the object, so that the server need not canonicalize an unchanged object
// again.
type ChangeReporter interface {
	// AdmitReport is Admit that also reports whether a.Object changed.
	AdmitReport(ctx context.Context, a *Attributes) (changed bool, err error)
}

// AdmitReport runs every mutator like Admit and reports whether any of them
// may have changed a.Object (a mutator that is not a ChangeReporter may have).
func (c *Chain) AdmitReport(ctx context.Context, a *Attributes) (bool, error) {
	changed := false
	for _, m := range c.Mutators {
		if r, ok := m.(ChangeReporter); ok {
			ch, err := r.AdmitReport(ctx, a)
			if err != nil {
				return changed, err
			}
			changed = changed || ch
			continue
		}
		if err := m.Admit(ctx, a); err != nil {
			return true, err
		}
		changed = true
	}
	return changed, nil
}

// Validate runs every validator and returns the first error.
func (c *Chain) Validate(ctx context.Context, a *Attributes) error {
	for _, v := range c.Validators {
		if err := v.Validate(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// MutationScoper is an optional Mutator extension: MayMutate reports whether
// the plugin could change the object of a request like a (false: it leaves
// every such object as it is). A Mutator without it may change anything.
type MutationScoper interface {
	MayMutate(ctx context.Context, a *Attributes) bool
}

// MayMutate reports whether a mutating plugin of the chain could change the
// object of a request like a (see MutationScoper).
func (c *Chain) MayMutate(ctx context.Context, a *Attributes) bool {
	if c == nil {
		return false
	}
	for _, m := range c.Mutators {
		if s, ok := m.(MutationScoper); !ok || s.MayMutate(ctx, a) {
			return true
		}
	}
	return false
}

// ManagedFieldsScoper is an optional extension of Mutators and Validators:
// MayReadManagedFields reports whether the plugin could read or change the
// object's metadata.managedFields on a request like a (false: it ignores
// them). A plugin without it may. When no plugin of a chain may, the API
// server leaves out of the object it admits the managedFields entry a create
// adds (as kube-apiserver, it computes the entry before mutating admission)
// and puts it in only once admission is done, as the bytes it stores: that
// entry is then never built as decoded JSON.
type ManagedFieldsScoper interface {
	MayReadManagedFields(ctx context.Context, a *Attributes) bool
}

// MayReadManagedFields reports whether a plugin of the chain, mutating or
// validating, could read or change the managedFields of the object of a
// request like a (see ManagedFieldsScoper).
func (c *Chain) MayReadManagedFields(ctx context.Context, a *Attributes) bool {
	if c == nil {
		return false
	}
	for _, m := range c.Mutators {
		if s, ok := m.(ManagedFieldsScoper); !ok || s.MayReadManagedFields(ctx, a) {
			return true
		}
	}
	for _, v := range c.Validators {
		if s, ok := v.(ManagedFieldsScoper); !ok || s.MayReadManagedFields(ctx, a) {
			return true
		}
	}
	return false
}

// Empty reports whether the chain has no plugins.
func (c *Chain) Empty() bool { return c == nil || (len(c.Mutators) == 0 && len(c.Validators) == 0) }

// ErrDenied is wrapped by refusals that carry no API error of their own.
var ErrDenied = errors.New("admission: denied")
