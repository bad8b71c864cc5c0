package filters

import "net/http"

// Options select the filters Chain installs; a nil or zero field leaves its
// filter out.
type Options struct {
	// Authenticator enables authentication (401 for requests without valid
	// credentials outside the public paths).
	Authenticator Authenticator
	// Authentication tunes the authentication filter.
	Authentication AuthenticationOptions
	// Authorizer enables authorization (403).
	Authorizer Authorizer
	// Audit enables the audit log when Audit.Sink is set.
	Audit AuditOptions
	// MaxInFlight enables the in-flight limits when either bound is set.
	MaxInFlight MaxInFlightOptions
	// FlowControl, when set, is API Priority and Fairness
	// (framework/apiserver/flowcontrol's Controller.Filter): it replaces the
	// mutating and read-only budgets of MaxInFlight, whose per-user watch
	// limit still applies.
	FlowControl func(http.Handler) http.Handler
	// Inner wraps the handler inside authorization (e.g. virtual resources such
	// as SubjectAccessReviews that answer from the request's user).
	Inner func(http.Handler) http.Handler
}

// Enabled reports whether any filter is configured.
func (o *Options) Enabled() bool {
	return o.Authenticator != nil || o.Authorizer != nil || o.Audit.Sink != nil ||
		o.MaxInFlight.enabled() || o.FlowControl != nil || o.Inner != nil
}

// Chain wraps h with the configured filters, outermost first: request info,
// audit, authentication, impersonation (with an authorizer), priority and
// fairness or max in flight,
// authorization, Inner.
func Chain(h http.Handler, o Options) http.Handler {
	if !o.Enabled() {
		return h
	}
	if o.Inner != nil {
		h = o.Inner(h)
	}
	if o.Authorizer != nil {
		h = WithAuthorization(h, o.Authorizer)
	}
	if o.FlowControl != nil {
		h = o.FlowControl(WithMaxInFlight(h, MaxInFlightOptions{MaxWatchesPerUser: o.MaxInFlight.MaxWatchesPerUser}))
	} else {
		h = WithMaxInFlight(h, o.MaxInFlight)
	}
	if o.Authenticator != nil && o.Authorizer != nil {
		h = WithImpersonation(h, o.Authorizer)
	}
	if o.Authenticator != nil {
		h = WithAuthentication(h, o.Authenticator, o.Authentication)
	}
	if o.Audit.Sink != nil {
		h = WithAudit(h, o.Audit)
	}
	return WithRequestInfoFilter(h)
}
