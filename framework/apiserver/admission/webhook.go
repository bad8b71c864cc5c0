package admission

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/converge-dev/converge/framework/tracing"
	"go.opentelemetry.io/otel/attribute"
	"io"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/google/uuid"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/api/review"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/patch"
)

// Hook is one admission webhook as configured by a Validating- or
// MutatingWebhookConfiguration (admissionregistration.k8s.io/v1), in the terms
// the caller needs.
type Hook struct {
	// Name of the webhook (unique within its configuration).
	Name string
	// Configuration is the name of the configuration object holding it.
	Configuration string
	// URL is the endpoint (clientConfig.url), or empty when Service is set.
	URL string
	// Service is clientConfig.service.
	Service *ServiceReference
	// CABundle (PEM) verifies the webhook's serving certificate; empty means the
	// system roots.
	CABundle []byte
	Rules    []Rule
	// FailurePolicy is "Fail" (default) or "Ignore".
	FailurePolicy string
	// NamespaceSelector and ObjectSelector filter requests; nil matches everything.
	NamespaceSelector *api.LabelSelector
	ObjectSelector    *api.LabelSelector
	// SideEffects is None, NoneOnDryRun, Some or Unknown; dry-run requests are
	// refused by webhooks other than None and NoneOnDryRun.
	SideEffects string
	// TimeoutSeconds bounds each call (default 10, at most 30).
	TimeoutSeconds int32
	// MatchPolicy is "Exact" or "Equivalent" (the default, as in
	// admissionregistration.k8s.io/v1): with Equivalent, a request for a
	// resource the rules do not name is still sent when they name the same
	// group-resource in another served version, converted to that version.
	MatchPolicy string
	// MatchConditions further select requests (all must be true); see
	// MatchCondition.
	MatchConditions []MatchCondition
	// ReinvocationPolicy of a mutating webhook: "Never" (default) or
	// "IfNeeded" (called once more when a later webhook changed the object).
	ReinvocationPolicy string
}

// ServiceReference locates a webhook served by a Service.
type ServiceReference struct {
	Namespace, Name, Path string
	Port                  int32
}

// Rule selects requests by operation, group, version, resource and scope.
type Rule struct {
	Operations  []string
	APIGroups   []string
	APIVersions []string
	// Resources: "pods", "pods/status", "pods/*", "*/status", "*" (every
	// resource, no subresources) or "*/*".
	Resources []string
	// Scope is "Cluster", "Namespaced" or "*" (default).
	Scope string
}

// Matches reports whether the rule selects a.
func (r Rule) Matches(a *Attributes) bool {
	if !matchesAny(r.Operations, string(a.Operation)) || !matchesAny(r.APIGroups, a.Resource.Group) ||
		!matchesAny(r.APIVersions, a.Resource.Version) {
		return false
	}
	switch r.Scope {
	case "Cluster":
		if a.Namespaced {
			return false
		}
	case "Namespaced":
		if !a.Namespaced {
			return false
		}
	}
	return r.namesResource(a)
}

// namesResource reports whether the rule's resources name a's.
func (r Rule) namesResource(a *Attributes) bool {
	for _, res := range r.Resources {
		name, sub, _ := strings.Cut(res, "/")
		if (name == "*" || name == a.Resource.Resource) && (sub == a.Subresource || sub == "*") {
			return true
		}
	}
	return false
}

// mayMatch is Matches without the version and scope: true for every request
// the rule could select directly or through an equivalent resource.
func (r Rule) mayMatch(a *Attributes) bool {
	return matchesAny(r.Operations, string(a.Operation)) && matchesAny(r.APIGroups, a.Resource.Group) && r.namesResource(a)
}

func matchesAny(list []string, v string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, v)
}

// Webhooks is the admission plugin that calls webhooks: a Mutator when Mutating
// is set, else a Validator.
type Webhooks struct {
	// Mutating selects mutating webhooks (JSON patch responses are applied).
	Mutating bool
	// Hooks lists the current webhooks, in call order. Required.
	Hooks func(ctx context.Context) ([]Hook, error)
	// NamespaceLabels returns a namespace's labels, for namespaceSelector.
	// Required when any hook has a namespaceSelector.
	NamespaceLabels func(ctx context.Context, namespace string) (map[string]string, error)
	// ServiceURL turns a service reference into a URL; nil uses
	// https://NAME.NAMESPACE.svc:PORT/PATH.
	ServiceURL func(ctx context.Context, ref ServiceReference) (string, error)
	// Dial connects to webhooks (the host:port of their URL; for a service
	// reference NAME.NAMESPACE.svc:PORT, which Dial is to resolve to the
	// Service's endpoints, see builtin/serviceresolver). Nil dials the
	// address as it is.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Warn receives the warnings webhooks return; may be nil. They also go to
	// the client through the sink of the request's context (WithWarnings).
	Warn func(ctx context.Context, text string)
	// Equivalents lists the resources equivalent to a request's resource (the
	// same group-resource served in other versions), for hooks whose
	// matchPolicy is Equivalent; nil means none (every hook matches exactly).
	// RegistryEquivalents derives them from a registry.
	Equivalents func(gvr api.GroupVersionResource) []EquivalentResource

	clients    sync.Map // CA bundle hash → *http.Client
	conditions matchConditions
}

var (
	_ Mutator        = (*Webhooks)(nil)
	_ Validator      = (*Webhooks)(nil)
	_ ChangeReporter = (*Webhooks)(nil)
	_ MutationScoper = (*Webhooks)(nil)

	_ ManagedFieldsScoper = (*Webhooks)(nil)
)

// Admit implements Mutator (a no-op unless Mutating).
func (w *Webhooks) Admit(ctx context.Context, a *Attributes) error {
	if !w.Mutating {
		return nil
	}
	return w.run(ctx, a)
}

// AdmitReport implements ChangeReporter: a webhook's patch replaces a.Object,
// so the object changed when a.Object is another map afterwards.
func (w *Webhooks) AdmitReport(ctx context.Context, a *Attributes) (bool, error) {
	before := reflect.ValueOf(a.Object).UnsafePointer()
	err := w.Admit(ctx, a)
	return reflect.ValueOf(a.Object).UnsafePointer() != before, err
}

// MayMutate implements MutationScoper: mutating webhooks may change requests
// some current hook's rules could select (selectors and match conditions are
// not evaluated: they only narrow); if the hooks cannot be listed, anything.
func (w *Webhooks) MayMutate(ctx context.Context, a *Attributes) bool {
	return w.Mutating && w.mayCall(ctx, a)
}

// MayReadManagedFields implements ManagedFieldsScoper: webhooks receive the
// object with its managedFields (and mutating ones may change them) on the
// requests some current hook's rules could select; if the hooks cannot be
// listed, on any.
func (w *Webhooks) MayReadManagedFields(ctx context.Context, a *Attributes) bool {
	return w.mayCall(ctx, a)
}

// mayCall reports whether a current hook's rules could select a request
// like a (true when the hooks cannot be listed).
func (w *Webhooks) mayCall(ctx context.Context, a *Attributes) bool {
	if exempt(a) {
		return false
	}
	hooks, err := w.Hooks(ctx)
	if err != nil {
		return true
	}
	for i := range hooks {
		for _, r := range hooks[i].Rules {
			if r.mayMatch(a) {
				return true
			}
		}
	}
	return false
}

// Validate implements Validator (a no-op when Mutating).
func (w *Webhooks) Validate(ctx context.Context, a *Attributes) error {
	if w.Mutating {
		return nil
	}
	return w.run(ctx, a)
}

// exempt: webhooks are never called for their own configurations, so a broken
// webhook can always be removed.
func exempt(a *Attributes) bool {
	return a.Resource.Group == "admissionregistration.k8s.io" &&
		(a.Resource.Resource == "validatingwebhookconfigurations" || a.Resource.Resource == "mutatingwebhookconfigurations")
}

func (w *Webhooks) run(ctx context.Context, a *Attributes) error {
	if exempt(a) {
		return nil
	}
	hooks, err := w.Hooks(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("list admission webhooks: %w", err))
	}
	// For reinvocationPolicy IfNeeded: the object as each such mutating
	// webhook left it.
	type invoked struct {
		hook  *Hook
		after unsafe.Pointer
	}
	var ifNeeded []invoked
	for i := range hooks {
		h := &hooks[i]
		called, err := w.invoke(ctx, h, a)
		if err != nil {
			return err
		}
		if called && w.Mutating && h.ReinvocationPolicy == "IfNeeded" {
			ifNeeded = append(ifNeeded, invoked{hook: h, after: reflect.ValueOf(a.Object).UnsafePointer()})
		}
	}
	// Like Kubernetes, a webhook that asked for it is called once more when a
	// later webhook changed the object after it ran.
	for _, inv := range ifNeeded {
		if reflect.ValueOf(a.Object).UnsafePointer() == inv.after {
			continue
		}
		if _, err := w.invoke(ctx, inv.hook, a); err != nil {
			return err
		}
	}
	return nil
}

// invoke calls h for a when its rules, selectors and matchConditions select
// the request; called reports whether it was called. Errors are final: the
// webhook's failurePolicy has been applied.
func (w *Webhooks) invoke(ctx context.Context, h *Hook, a *Attributes) (called bool, err error) {
	eq, ruleMatch := w.target(h, a)
	if !ruleMatch {
		return false, nil
	}
	match, err := w.matches(ctx, h, a)
	if err != nil {
		if h.FailurePolicy == "Ignore" {
			return false, nil
		}
		return false, apierrors.NewInternalError(fmt.Errorf("failed calling webhook %q: %w", h.Name, err))
	}
	if !match {
		return false, nil
	}
	if a.DryRun && h.SideEffects != "None" && h.SideEffects != "NoneOnDryRun" {
		return false, apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", h.Name))
	}
	start := time.Now()
	kind := "validating"
	if w.Mutating {
		kind = "mutating"
	}
	cctx, span := tracing.Child(ctx, "converge/apiserver", "webhook "+h.Name, attribute.String("webhook.type", kind))
	err = w.callAs(cctx, h, a, eq)
	tracing.End(span, err)
	if err != nil {
		if errors.Is(err, errConditionsNotMet) {
			return false, nil
		}
		observeWebhook(ctx, h.Name, w.Mutating, a.Operation, h.FailurePolicy != "Ignore" || errors.As(err, new(*apierrors.StatusError)), time.Since(start))
		var se *apierrors.StatusError
		if errors.As(err, &se) {
			return false, err
		}
		if h.FailurePolicy == "Ignore" {
			return false, nil
		}
		return false, apierrors.NewInternalError(fmt.Errorf("failed calling webhook %q: %w", h.Name, err))
	}
	observeWebhook(ctx, h.Name, w.Mutating, a.Operation, false, time.Since(start))
	return true, nil
}

// errConditionsNotMet: a matchCondition was false, so the webhook is skipped.
var errConditionsNotMet = errors.New("matchConditions not met")

// EquivalentResource is a resource equivalent to a request's: the same
// group-resource in another served version.
type EquivalentResource struct {
	Resource api.GroupVersionResource
	Kind     api.GroupVersionKind
	// Convert converts an object of the group-resource, in any version, to
	// version to (and sets apiVersion). It may modify obj.
	Convert func(obj map[string]any, to api.GroupVersion) (map[string]any, error)
}

// RegistryEquivalents lists, for a resource of reg, the other versions reg
// serves of the same group-resource when the resource converts between them
// (Resource.Convert), the storage version first.
func RegistryEquivalents(reg *registry.Registry) func(gvr api.GroupVersionResource) []EquivalentResource {
	return func(gvr api.GroupVersionResource) []EquivalentResource {
		cur := reg.Get(gvr)
		if cur == nil || cur.Convert == nil {
			return nil
		}
		storage := cur.StorageGroupVersion().Version
		var out []EquivalentResource
		for _, r := range reg.All() {
			if r.GroupVersion.Group != gvr.Group || r.Resource != gvr.Resource || r.GroupVersion.Version == gvr.Version {
				continue
			}
			eq := EquivalentResource{Resource: r.GroupVersionResource(), Kind: r.GroupVersionKind(), Convert: cur.Convert}
			if r.GroupVersion.Version == storage {
				out = append([]EquivalentResource{eq}, out...)
			} else {
				out = append(out, eq)
			}
		}
		return out
	}
}

// target reports whether h's rules select a: as it is (eq nil) or, with
// matchPolicy Equivalent, through the first equivalent resource they name
// (eq is the resource h is to be called with).
func (w *Webhooks) target(h *Hook, a *Attributes) (eq *EquivalentResource, match bool) {
	if slices.ContainsFunc(h.Rules, func(r Rule) bool { return r.Matches(a) }) {
		return nil, true
	}
	if h.MatchPolicy == "Exact" || w.Equivalents == nil {
		return nil, false
	}
	if a.Subresource != "" && a.Subresource != "status" {
		// Other subresources (scale) have kinds of their own.
		return nil, false
	}
	for _, e := range w.Equivalents(a.Resource) {
		b := *a
		b.Resource, b.Kind = e.Resource, e.Kind
		if slices.ContainsFunc(h.Rules, func(r Rule) bool { return r.Matches(&b) }) {
			return &e, true
		}
	}
	return nil, false
}

// callAs calls h with a, converted to eq's version when eq is set; a mutated
// object is converted back to a's version.
func (w *Webhooks) callAs(ctx context.Context, h *Hook, a *Attributes, eq *EquivalentResource) error {
	if eq == nil {
		return w.call(ctx, h, a, a)
	}
	convert := func(o map[string]any, to api.GroupVersion) (map[string]any, error) {
		if o == nil {
			return nil, nil
		}
		out, err := eq.Convert(api.DeepCopyJSON(o), to)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("admission webhook %q: convert %s to %s: %w", h.Name, a.Resource, to, err))
		}
		return out, nil
	}
	b := *a
	b.Resource, b.Kind = eq.Resource, eq.Kind
	var err error
	if b.Object, err = convert(a.Object, eq.Resource.GroupVersion()); err != nil {
		return err
	}
	if b.OldObject, err = convert(a.OldObject, eq.Resource.GroupVersion()); err != nil {
		return err
	}
	sent := b.Object
	if err := w.call(ctx, h, &b, a); err != nil {
		return err
	}
	if b.Object == nil || reflect.ValueOf(b.Object).UnsafePointer() == reflect.ValueOf(sent).UnsafePointer() {
		return nil
	}
	back, err := convert(b.Object, a.Resource.GroupVersion())
	if err != nil {
		return err
	}
	a.Object = back
	return nil
}

// matches applies h's object and namespace selectors (its rules matched).
func (w *Webhooks) matches(ctx context.Context, h *Hook, a *Attributes) (bool, error) {
	return MatchSelectors(a, h.ObjectSelector, h.NamespaceSelector, func() (map[string]string, error) {
		if w.NamespaceLabels == nil {
			return nil, errors.New("no namespace lookup configured")
		}
		return w.NamespaceLabels(ctx, a.Namespace)
	})
}

// MatchSelectors applies the objectSelector (to the new or the old object)
// and namespaceSelector of a webhook or an admission policy to a, as
// Kubernetes does: a nil or empty selector matches everything, a namespace
// matches by its own labels, and cluster-scoped objects match every
// namespaceSelector. nsLabels returns the labels of a's namespace.
func MatchSelectors(a *Attributes, objectSelector, namespaceSelector *api.LabelSelector, nsLabels func() (map[string]string, error)) (bool, error) {
	if objectSelector != nil {
		sel, err := labels.FromLabelSelector(objectSelector)
		if err != nil {
			return false, fmt.Errorf("objectSelector: %w", err)
		}
		if !sel.Empty() {
			ok := false
			for _, o := range []map[string]any{a.Object, a.OldObject} {
				if o != nil && sel.Matches(api.NestedStringMap(o, "metadata", "labels")) {
					ok = true
				}
			}
			if !ok {
				return false, nil
			}
		}
	}
	if namespaceSelector == nil {
		return true, nil
	}
	sel, err := labels.FromLabelSelector(namespaceSelector)
	if err != nil {
		return false, fmt.Errorf("namespaceSelector: %w", err)
	}
	if sel.Empty() {
		return true, nil
	}
	var l map[string]string
	switch {
	case a.Resource.Group == "" && a.Resource.Resource == "namespaces":
		o := a.Object
		if o == nil {
			o = a.OldObject
		}
		l = api.NestedStringMap(o, "metadata", "labels")
	case !a.Namespaced || a.Namespace == "":
		return true, nil
	default:
		if l, err = nsLabels(); err != nil {
			return false, fmt.Errorf("namespaceSelector: %w", err)
		}
	}
	return sel.Matches(l), nil
}

// call sends a to h; orig is the request as the client made it (requestKind,
// requestResource), a itself unless a is its conversion for matchPolicy
// Equivalent.
func (w *Webhooks) call(ctx context.Context, h *Hook, a, orig *Attributes) error {
	url := h.URL
	if url == "" {
		if h.Service == nil {
			return errors.New("webhook has neither url nor service")
		}
		var err error
		if w.ServiceURL != nil {
			url, err = w.ServiceURL(ctx, *h.Service)
		} else {
			url, err = defaultServiceURL(*h.Service)
		}
		if err != nil {
			return err
		}
	}
	timeout := time.Duration(h.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if timeout > 30*time.Second {
		timeout = 30 * time.Second
	}
	// Like kube-apiserver's webhook client, the call tells the webhook its
	// deadline: ?timeout=10s.
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	url += sep + "timeout=" + timeout.String()
	uid := uuid.NewString()
	kind := review.GroupVersionKind{Group: a.Kind.Group, Version: a.Kind.Version, Kind: a.Kind.Kind}
	res := review.GroupVersionResource{Group: a.Resource.Group, Version: a.Resource.Version, Resource: a.Resource.Resource}
	reqKind := review.GroupVersionKind{Group: orig.Kind.Group, Version: orig.Kind.Version, Kind: orig.Kind.Kind}
	reqRes := review.GroupVersionResource{Group: orig.Resource.Group, Version: orig.Resource.Version, Resource: orig.Resource.Resource}
	req := &review.AdmissionRequest{
		UID: uid, Kind: kind, Resource: res, SubResource: a.Subresource,
		RequestKind: &reqKind, RequestResource: &reqRes, RequestSubResource: orig.Subresource,
		Name: a.Name, Namespace: a.Namespace, Operation: a.Operation, DryRun: &a.DryRun,
	}
	if a.User != nil {
		req.UserInfo = review.UserInfo{Username: a.User.Name, UID: a.User.UID, Groups: a.User.Groups, Extra: a.User.Extra}
	}
	var err error
	if req.Object, err = rawObject(a.Object); err != nil {
		return fmt.Errorf("encode object: %w", err)
	}
	if req.OldObject, err = rawObject(a.OldObject); err != nil {
		return fmt.Errorf("encode old object: %w", err)
	}
	if len(h.MatchConditions) > 0 {
		ok, err := w.conditions.evaluate(h.MatchConditions, req)
		if err != nil {
			return err
		}
		if !ok {
			return errConditionsNotMet
		}
	}
	req.Options = operationOptions(a.Operation)
	body, err := json.Marshal(review.AdmissionReview{APIVersion: review.AdmissionAPIVersion, Kind: review.AdmissionKind, Request: req})
	if err != nil {
		return fmt.Errorf("encode AdmissionReview: %w", err)
	}
	client, err := w.client(h.CABundle)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(cctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	tracing.Inject(cctx, hr.Header)
	resp, err := client.Do(hr)
	if err != nil {
		return fmt.Errorf("failed to call webhook: %w", err)
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, 3<<20))
	if err != nil {
		return fmt.Errorf("read webhook response: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("webhook returned HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(rb)))
	}
	var out review.AdmissionReview
	if err := json.Unmarshal(rb, &out); err != nil {
		return fmt.Errorf("decode webhook response: %w", err)
	}
	r := out.Response
	if out.APIVersion != review.AdmissionAPIVersion || out.Kind != review.AdmissionKind {
		return fmt.Errorf("expected webhook response of %s, Kind=%s, got %s, Kind=%s",
			review.AdmissionAPIVersion, review.AdmissionKind, out.APIVersion, out.Kind)
	}
	if r == nil {
		return errors.New("webhook response was absent")
	}
	if r.UID != uid {
		return fmt.Errorf("expected response.uid=%q, got %q", uid, r.UID)
	}
	for _, warn := range r.Warnings {
		if w.Warn != nil {
			w.Warn(ctx, warn)
		}
		AddWarning(ctx, warn)
	}
	if !r.Allowed {
		return denied(h.Name, r.Result)
	}
	if len(r.Patch) == 0 {
		return nil
	}
	if !w.Mutating {
		return errors.New("validating webhook may not return a patch")
	}
	if r.PatchType == nil || *r.PatchType != "JSONPatch" {
		return errors.New("webhook returned a patch without patchType JSONPatch")
	}
	if a.Object == nil {
		return nil
	}
	patched, err := patch.JSONPatch(req.Object, r.Patch)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("admission webhook %q returned an invalid patch: %w", h.Name, err))
	}
	m, err := api.DecodeMap(patched)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("admission webhook %q patch produced a non-object: %w", h.Name, err))
	}
	a.Object = m
	return nil
}

// rawObject encodes an object of an AdmissionRequest; nil stays absent.
func rawObject(obj map[string]any) (json.RawMessage, error) {
	if obj == nil {
		return nil, nil
	}
	return json.Marshal(obj)
}

// operationOptions are the options AdmissionRequest carries for op, as the
// API server sends them: the kind alone.
func operationOptions(op Operation) json.RawMessage {
	switch op {
	case Create:
		return json.RawMessage(`{"apiVersion":"meta.k8s.io/v1","kind":"CreateOptions"}`)
	case Update:
		return json.RawMessage(`{"apiVersion":"meta.k8s.io/v1","kind":"UpdateOptions"}`)
	case Delete:
		return json.RawMessage(`{"apiVersion":"meta.k8s.io/v1","kind":"DeleteOptions"}`)
	}
	return nil
}

// denied is Kubernetes' refusal: `admission webhook "x" denied the request: msg`,
// with the webhook's code when it is an error code (400 otherwise).
func denied(name string, res *api.Status) error {
	st := api.Status{}
	if res != nil {
		st = *res
	}
	if st.Code < http.StatusBadRequest {
		st.Code = http.StatusBadRequest
	}
	st.Status = api.StatusFailure
	by := fmt.Sprintf("admission webhook %q denied the request", name)
	switch {
	case st.Message != "":
		st.Message = by + ": " + st.Message
	case st.Reason != "":
		st.Message = by + ": " + st.Reason
	default:
		st.Message = by + " without explanation"
	}
	return apierrors.FromStatus(st)
}

func defaultServiceURL(ref ServiceReference) (string, error) {
	if ref.Name == "" || ref.Namespace == "" {
		return "", errors.New("service reference needs a name and a namespace")
	}
	port := ref.Port
	if port == 0 {
		port = 443
	}
	return fmt.Sprintf("https://%s.%s.svc:%d%s", ref.Name, ref.Namespace, port, ref.Path), nil
}

func (w *Webhooks) client(caBundle []byte) (*http.Client, error) {
	key := sha256.Sum256(caBundle)
	k := base64.StdEncoding.EncodeToString(key[:])
	if c, ok := w.clients.Load(k); ok {
		return c.(*http.Client), nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("caBundle holds no PEM certificate")
		}
		tc.RootCAs = pool
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4,
		IdleConnTimeout: 90 * time.Second, DialContext: w.Dial}}
	actual, _ := w.clients.LoadOrStore(k, c)
	return actual.(*http.Client), nil
}
