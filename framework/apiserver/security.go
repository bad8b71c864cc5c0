package apiserver

import (
	"context"
	"github.com/converge-dev/converge/framework/tracing"
	"net/http"
	"reflect"
	"time"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	admissionchain "github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Security configures the opt-in request filters (authentication,
// authorization, audit, max in flight) and the admission chain. The zero value
// changes nothing: no filters, every request allowed, no admission plugins.
type Security struct {
	// Filters run in front of routing (see package filters for the order).
	Filters filters.Options
	// Admission runs on create, update, patch and delete (including
	// subresources); nil means none.
	Admission *admissionchain.Chain
}

// securedHandler wraps the server's routing with the configured filters and
// Table negotiation (withTableNegotiation), with its own panic recovery so a panicking filter answers 500 like the handler does.
func (s *Server) securedHandler(h http.Handler) http.Handler {
	if !s.opts.Security.Filters.Enabled() {
		return s.withTableNegotiation(h)
	}
	// Negotiation runs after authorization and before the virtual resources
	// (Inner) answer.
	fo := s.opts.Security.Filters
	inner := fo.Inner
	fo.Inner = func(next http.Handler) http.Handler {
		if inner != nil {
			next = inner(next)
		}
		return s.withTableNegotiation(next)
	}
	chained := filters.Chain(h, fo)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer s.recoverPanic(w, r, "Panic in request filters")
		chained.ServeHTTP(w, r)
	})
}

func (s *Server) admissionEnabled() bool { return !s.opts.Security.Admission.Empty() }

// admissionAttributes returns the attributes of q's call to the admission
// chain. They are q's one value, set anew on each call (a create asks the
// chain up to three times): no caller keeps them past its call to the
// chain, and the chain's plugins keep nothing of them but the objects.
func (s *Server) admissionAttributes(ctx context.Context, q *request, op admissionchain.Operation, name string, obj, old map[string]any) *admissionchain.Attributes {
	a := &q.admission().attrs
	*a = admissionchain.Attributes{
		Operation: op, Kind: q.res.GroupVersionKind(), Resource: q.res.GroupVersionResource(),
		Subresource: q.ri.subresource, Namespace: q.ri.namespace, Name: name,
		Object: obj, OldObject: old, Namespaced: q.res.Namespaced, DryRun: q.dryRun(),
	}
	if !q.res.Namespaced {
		a.Namespace = ""
	}
	if u, ok := filters.UserFrom(ctx); ok {
		a.User = u
	}
	return a
}

// admissionContext lets admission plugins send warnings to q's client and
// webhook calls reach the metrics.
// It is made once per request and parent context.
func (s *Server) admissionContext(ctx context.Context, q *request) context.Context {
	m := q.admission()
	if m.ctx != nil && sameContext(m.parent, ctx) {
		return m.ctx
	}
	actx := admissionchain.WithWebhookObserver(ctx, s.metrics.observeWebhook)
	actx = admissionchain.WithWarnings(actx, func(text string) { addWarning(q.w, text) })
	m.parent, m.ctx = ctx, actx
	return actx
}

// sameContext says whether a and b are one context (== on two values of
// a type that is not comparable would panic).
func sameContext(a, b context.Context) bool {
	t := reflect.TypeOf(a)
	return t == reflect.TypeOf(b) && t.Comparable() && a == b
}

// admissionError keeps API errors and turns anything else into 403.
func admissionError(q *request, name string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*apierrors.StatusError); ok {
		return err
	}
	return apierrors.NewForbidden(q.groupResource(), name, err)
}

// mutateCreate runs the mutating plugins on a canonical new object and, when
// there are any, canonicalizes their result again.
func (s *Server) mutateCreate(ctx context.Context, q *request, name string, obj map[string]any, dec registry.Decoded, typed bool) (map[string]any, registry.Decoded, error) {
	if !s.admissionEnabled() || len(s.opts.Security.Admission.Mutators) == 0 {
		return obj, dec, nil
	}
	a, changed, err := s.admit(ctx, q, admissionchain.Create, name, obj, nil)
	if err != nil || !changed {
		return obj, dec, err
	}
	return s.canonicalizeTyped(q, a.Object, name, typed, false)
}

// admissionReadsManagedFields reports whether a plugin of the admission
// chain may read or change the managedFields of obj, created by q
// (admission.ManagedFieldsScoper).
func (s *Server) admissionReadsManagedFields(ctx context.Context, q *request, name string, obj map[string]any) bool {
	if !s.admissionEnabled() {
		return false
	}
	return s.opts.Security.Admission.MayReadManagedFields(ctx, s.admissionAttributes(ctx, q, admissionchain.Create, name, obj, nil))
}

// admit runs the mutating plugins on obj and reports whether they may have
// changed it; managedFields they left invalid are reset to obj's
// (keepValidManagedFields). err is the request's error.
func (s *Server) admit(ctx context.Context, q *request, op admissionchain.Operation, name string, obj, old map[string]any) (*admissionchain.Attributes, bool, error) {
	ctx = s.admissionContext(ctx, q)
	a := s.admissionAttributes(ctx, q, op, name, obj, old)
	var meta map[string]any
	if m, ok := obj["metadata"].(map[string]any); ok {
		meta = m
	}
	before, had := meta["managedFields"]
	start := time.Now()
	actx, span := tracing.Child(ctx, tracerName, "admission admit")
	changed, err := s.opts.Security.Admission.AdmitReport(actx, a)
	tracing.End(span, err)
	s.metrics.observeAdmission("admit", a.Operation, err, start)
	if err != nil {
		return a, changed, admissionError(q, name, err)
	}
	if changed {
		keepValidManagedFields(q, a.Object, before, had)
	}
	return a, changed, nil
}

// mutateUpdate runs the mutating plugins on a canonical updated object.
func (s *Server) mutateUpdate(ctx context.Context, q *request, name string, obj, old map[string]any) (map[string]any, error) {
	if !s.admissionEnabled() || len(s.opts.Security.Admission.Mutators) == 0 {
		return obj, nil
	}
	a, changed, err := s.admit(ctx, q, admissionchain.Update, name, obj, old)
	if err != nil || !changed {
		return obj, err
	}
	return s.canonicalize(q, a.Object, name)
}

// validateAdmission runs the validating plugins on a validated object.
func (s *Server) validateAdmission(ctx context.Context, q *request, op admissionchain.Operation, name string, obj, old map[string]any) error {
	if !s.admissionEnabled() {
		return nil
	}
	ctx = s.admissionContext(ctx, q)
	a := s.admissionAttributes(ctx, q, op, name, obj, old)
	start := time.Now()
	actx, span := tracing.Child(ctx, tracerName, "admission validate")
	err := s.opts.Security.Admission.Validate(actx, a)
	tracing.End(span, err)
	s.metrics.observeAdmission("validate", op, err, start)
	return admissionError(q, name, err)
}

// admitDeletion runs the whole chain for a delete of cur.
func (s *Server) admitDeletion(ctx context.Context, q *request, name string, cur map[string]any) error {
	if !s.admissionEnabled() {
		return nil
	}
	ctx = s.admissionContext(ctx, q)
	a := s.admissionAttributes(ctx, q, admissionchain.Delete, name, nil, api.DeepCopyJSON(cur))
	return s.admitAndValidate(ctx, q, a)
}

// admitAndValidate runs the mutating, then the validating plugins on a.
func (s *Server) admitAndValidate(ctx context.Context, q *request, a *admissionchain.Attributes) error {
	start := time.Now()
	actx, span := tracing.Child(ctx, tracerName, "admission admit")
	err := s.opts.Security.Admission.Admit(actx, a)
	tracing.End(span, err)
	s.metrics.observeAdmission("admit", a.Operation, err, start)
	if err != nil {
		return admissionError(q, a.Name, err)
	}
	start = time.Now()
	actx, span = tracing.Child(ctx, tracerName, "admission validate")
	err = s.opts.Security.Admission.Validate(actx, a)
	tracing.End(span, err)
	s.metrics.observeAdmission("validate", a.Operation, err, start)
	return admissionError(q, a.Name, err)
}

// validateCreate runs the validating plugins on a new, valid object.
func (s *Server) validateCreate(ctx context.Context, q *request, name string, obj map[string]any) error {
	return s.validateAdmission(ctx, q, admissionchain.Create, name, obj, nil)
}

// validateUpdate runs the validating plugins on a valid update of old to obj.
func (s *Server) validateUpdate(ctx context.Context, q *request, name string, obj, old map[string]any) error {
	return s.validateAdmission(ctx, q, admissionchain.Update, name, obj, old)
}

// admitConnect runs the whole chain, with operation CONNECT, on a request of
// a subresource that is a registry.Connecter, its object the request's
// options (Kubernetes' connect admission, before the connection is made).
func (s *Server) admitConnect(q *request, sub registry.Subresource) error {
	c, ok := sub.(registry.Connecter)
	if !ok || !s.admissionEnabled() {
		return nil
	}
	opts, err := c.ConnectOptions(q.r)
	if err != nil {
		return err
	}
	ctx := s.admissionContext(q.ctx(), q)
	a := s.admissionAttributes(ctx, q, admissionchain.Connect, q.ri.name, opts, nil)
	a.DryRun = false
	a.Kind = sub.Kind()
	if a.Kind.Version == "" {
		a.Kind.Group, a.Kind.Version = q.res.GroupVersion.Group, q.res.GroupVersion.Version
	}
	return s.admitAndValidate(ctx, q, a)
}
