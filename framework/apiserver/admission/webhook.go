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
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
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
	for _, res := range r.Resources {
		name, sub, _ := strings.Cut(res, "/")
		if (name == "*" || name == a.Resource.Resource) && (sub == a.Subresource || sub == "*") {
			return true
		}
	}
	return false
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
	// Warn receives the warnings webhooks return; may be nil.
	Warn func(ctx context.Context, text string)

	clients sync.Map // CA bundle hash → *http.Client
}

var (
	_ Mutator   = (*Webhooks)(nil)
	_ Validator = (*Webhooks)(nil)
)

// Admit implements Mutator (a no-op unless Mutating).
func (w *Webhooks) Admit(ctx context.Context, a *Attributes) error {
	if !w.Mutating {
		return nil
	}
	return w.run(ctx, a)
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
	for i := range hooks {
		h := &hooks[i]
		match, err := w.matches(ctx, h, a)
		if err != nil {
			if h.FailurePolicy == "Ignore" {
				continue
			}
			return apierrors.NewInternalError(fmt.Errorf("failed calling webhook %q: %w", h.Name, err))
		}
		if !match {
			continue
		}
		if a.DryRun && h.SideEffects != "None" && h.SideEffects != "NoneOnDryRun" {
			return apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", h.Name))
		}
		if err := w.call(ctx, h, a); err != nil {
			var se *apierrors.StatusError
			if errors.As(err, &se) {
				return err
			}
			if h.FailurePolicy == "Ignore" {
				continue
			}
			return apierrors.NewInternalError(fmt.Errorf("failed calling webhook %q: %w", h.Name, err))
		}
	}
	return nil
}

func (w *Webhooks) matches(ctx context.Context, h *Hook, a *Attributes) (bool, error) {
	if !slices.ContainsFunc(h.Rules, func(r Rule) bool { return r.Matches(a) }) {
		return false, nil
	}
	if h.ObjectSelector != nil {
		sel, err := labels.FromLabelSelector(h.ObjectSelector)
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
	if h.NamespaceSelector != nil {
		sel, err := labels.FromLabelSelector(h.NamespaceSelector)
		if err != nil {
			return false, fmt.Errorf("namespaceSelector: %w", err)
		}
		if !sel.Empty() {
			var nsLabels map[string]string
			switch {
			case a.Resource.Group == "" && a.Resource.Resource == "namespaces":
				o := a.Object
				if o == nil {
					o = a.OldObject
				}
				nsLabels = api.NestedStringMap(o, "metadata", "labels")
			case !a.Namespaced || a.Namespace == "":
				return true, nil
			default:
				if w.NamespaceLabels == nil {
					return false, errors.New("namespaceSelector: no namespace lookup configured")
				}
				l, err := w.NamespaceLabels(ctx, a.Namespace)
				if err != nil {
					return false, fmt.Errorf("namespaceSelector: %w", err)
				}
				nsLabels = l
			}
			if !sel.Matches(nsLabels) {
				return false, nil
			}
		}
	}
	return true, nil
}

// AdmissionReview is admission.k8s.io/v1 AdmissionReview.
type AdmissionReview struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Request    *AdmissionRequest  `json:"request,omitempty"`
	Response   *AdmissionResponse `json:"response,omitempty"`
}

// AdmissionRequest is the request half of an AdmissionReview.
type AdmissionRequest struct {
	UID                string                `json:"uid"`
	Kind               GroupVersionKind      `json:"kind"`
	Resource           GroupVersionResource  `json:"resource"`
	SubResource        string                `json:"subResource,omitempty"`
	RequestKind        *GroupVersionKind     `json:"requestKind,omitempty"`
	RequestResource    *GroupVersionResource `json:"requestResource,omitempty"`
	RequestSubResource string                `json:"requestSubResource,omitempty"`
	Name               string                `json:"name,omitempty"`
	Namespace          string                `json:"namespace,omitempty"`
	Operation          Operation             `json:"operation"`
	UserInfo           any                   `json:"userInfo"`
	Object             map[string]any        `json:"object,omitempty"`
	OldObject          map[string]any        `json:"oldObject,omitempty"`
	DryRun             *bool                 `json:"dryRun,omitempty"`
	Options            map[string]any        `json:"options,omitempty"`
}

// GroupVersionKind is metav1.GroupVersionKind as AdmissionReview encodes it.
type GroupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// GroupVersionResource is metav1.GroupVersionResource as AdmissionReview encodes it.
type GroupVersionResource struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
}

// AdmissionResponse is the response half of an AdmissionReview.
type AdmissionResponse struct {
	UID              string            `json:"uid"`
	Allowed          bool              `json:"allowed"`
	Result           *api.Status       `json:"status,omitempty"`
	Patch            []byte            `json:"patch,omitempty"`
	PatchType        *string           `json:"patchType,omitempty"`
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
	Warnings         []string          `json:"warnings,omitempty"`
}

func (w *Webhooks) call(ctx context.Context, h *Hook, a *Attributes) error {
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
	uid := uuid.NewString()
	kind := GroupVersionKind{Group: a.Kind.Group, Version: a.Kind.Version, Kind: a.Kind.Kind}
	res := GroupVersionResource{Group: a.Resource.Group, Version: a.Resource.Version, Resource: a.Resource.Resource}
	req := &AdmissionRequest{
		UID: uid, Kind: kind, Resource: res, SubResource: a.Subresource,
		RequestKind: &kind, RequestResource: &res, RequestSubResource: a.Subresource,
		Name: a.Name, Namespace: a.Namespace, Operation: a.Operation,
		Object: a.Object, OldObject: a.OldObject, DryRun: &a.DryRun,
		UserInfo: map[string]any{},
	}
	if a.User != nil {
		req.UserInfo = a.User
	}
	switch a.Operation {
	case Create:
		req.Options = map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}
	case Update:
		req.Options = map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "UpdateOptions"}
	case Delete:
		req.Options = map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions"}
	}
	body, err := json.Marshal(AdmissionReview{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview", Request: req})
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
	var review AdmissionReview
	if err := json.Unmarshal(rb, &review); err != nil {
		return fmt.Errorf("decode webhook response: %w", err)
	}
	r := review.Response
	if review.APIVersion != "admission.k8s.io/v1" || review.Kind != "AdmissionReview" {
		return fmt.Errorf("expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got %s, Kind=%s", review.APIVersion, review.Kind)
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
	doc, err := json.Marshal(a.Object)
	if err != nil {
		return err
	}
	out, err := patch.JSONPatch(doc, r.Patch)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("admission webhook %q returned an invalid patch: %w", h.Name, err))
	}
	m, err := api.DecodeMap(out)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("admission webhook %q patch produced a non-object: %w", h.Name, err))
	}
	a.Object = m
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
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second}}
	actual, _ := w.clients.LoadOrStore(k, c)
	return actual.(*http.Client), nil
}
