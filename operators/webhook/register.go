package webhook

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/fields"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/operators"
)

// OperatorLabel marks the webhook configurations a Server owns; its value is
// the operator's name.
const OperatorLabel = "operators.converge.dev/operator"

// Kinds a Server registers.
var (
	MutatingConfigurationKind   = api.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"}
	ValidatingConfigurationKind = api.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}
)

// ConfigurationName is the name of the MutatingWebhookConfiguration and of
// the ValidatingWebhookConfiguration holding an operator's admission webhooks.
func ConfigurationName(operator string) string { return operator + "-webhooks" }

// clientConfig is a webhook's clientConfig, JSON-shaped.
func (s *Server) clientConfig(path string) map[string]any {
	return map[string]any{
		"url":      s.URL() + path,
		"caBundle": base64.StdEncoding.EncodeToString(s.CABundle()),
	}
}

// desiredWebhooks returns the webhooks of one configuration kind, JSON-shaped.
func (s *Server) desiredWebhooks(typ operators.WebhookType) []any {
	var out []any
	for _, h := range s.hooks {
		if h.Type != typ {
			continue
		}
		fp, se := h.FailurePolicy, h.SideEffects
		if fp == "" {
			fp = "Fail"
		}
		if se == "" {
			se = "None"
		}
		timeout := h.TimeoutSeconds
		if timeout <= 0 {
			timeout = 10
		}
		rules := make([]any, 0, len(h.Rules))
		for _, r := range h.Rules {
			rule := map[string]any{
				"operations": toAny(r.Operations), "apiGroups": toAny(r.APIGroups),
				"apiVersions": toAny(r.APIVersions), "resources": toAny(r.Resources),
			}
			if r.Scope != "" {
				rule["scope"] = r.Scope
			}
			rules = append(rules, rule)
		}
		w := map[string]any{
			"name": hookName(s.operator, h), "clientConfig": s.clientConfig(h.Path), "rules": rules,
			"failurePolicy": fp, "sideEffects": se, "timeoutSeconds": int64(timeout),
			"admissionReviewVersions": []any{"v1"},
			// Exact: an operator's webhook sees only the versions its rules
			// name; other versions are served by Converted handlers.
			"matchPolicy": "Exact",
		}
		if h.NamespaceSelector != nil {
			w["namespaceSelector"] = jsonValue(h.NamespaceSelector)
		}
		if h.ObjectSelector != nil {
			w["objectSelector"] = jsonValue(h.ObjectSelector)
		}
		out = append(out, w)
	}
	return out
}

// desiredConversion is spec.conversion of a CRD converted by h.
func (s *Server) desiredConversion(h operators.Webhook) map[string]any {
	return map[string]any{
		"strategy": "Webhook",
		"webhook": map[string]any{
			"clientConfig":             s.clientConfig(h.Path),
			"conversionReviewVersions": []any{"v1"},
		},
	}
}

// PrepareCRDs points spec.conversion of the CRDs that have a conversion
// webhook at this server (operators.InstallOptions.PrepareCRDs), so they are
// applied with webhook conversion from the start.
func (s *Server) PrepareCRDs(crds []*api.Unstructured) error {
	var errs []error
	for _, h := range s.hooks {
		if h.Type != operators.Conversion {
			continue
		}
		found := false
		for _, c := range crds {
			if c.GetName() != h.CRD {
				continue
			}
			found = true
			spec, _ := c.Object["spec"].(map[string]any)
			if spec == nil {
				errs = append(errs, fmt.Errorf("crd %s has no spec", h.CRD))
				continue
			}
			spec["conversion"] = s.desiredConversion(h)
		}
		if !found {
			errs = append(errs, fmt.Errorf("conversion webhook %s: crd %s is not one of the operator's CRDs", h.Path, h.CRD))
		}
	}
	return errors.Join(errs...)
}

// Register creates or updates the operator's MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration (ConfigurationName; deleted when the operator
// has no webhook of that type any more) and the spec.conversion of its CRDs
// with conversion webhooks, so that they call this server with its current
// URL and caBundle. Objects already right are not written. It is idempotent.
func (s *Server) Register(ctx context.Context, c *client.Client) error {
	errs := []error{
		s.ensureConfiguration(ctx, c, MutatingConfigurationKind, s.desiredWebhooks(operators.Mutating)),
		s.ensureConfiguration(ctx, c, ValidatingConfigurationKind, s.desiredWebhooks(operators.Validating)),
	}
	for _, h := range s.hooks {
		if h.Type == operators.Conversion {
			errs = append(errs, s.ensureConversion(ctx, c, h))
		}
	}
	return errors.Join(errs...)
}

func (s *Server) ensureConfiguration(ctx context.Context, c *client.Client, gvk api.GroupVersionKind, webhooks []any) error {
	name := ConfigurationName(s.operator)
	live := newObject(gvk)
	err := c.Get(ctx, client.ObjectKey{Name: name}, live)
	switch {
	case apierrors.IsNotFound(err):
		if len(webhooks) == 0 {
			return nil
		}
		obj := newObject(gvk)
		obj.Object["metadata"] = map[string]any{"name": name, "labels": map[string]any{OperatorLabel: s.operator}}
		obj.Object["webhooks"] = webhooks
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("create %s %s: %w", gvk.Kind, name, err)
		}
		s.log.Info("Registered webhooks", "kind", gvk.Kind, "name", name, "webhooks", len(webhooks))
		return nil
	case err != nil:
		return fmt.Errorf("get %s %s: %w", gvk.Kind, name, err)
	}
	if len(webhooks) == 0 {
		if live.GetLabels()[OperatorLabel] != s.operator {
			return nil
		}
		if err := c.Delete(ctx, live); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s %s: %w", gvk.Kind, name, err)
		}
		return nil
	}
	if live.GetLabels()[OperatorLabel] == s.operator && contains(live.Object["webhooks"], webhooks) {
		return nil
	}
	labels := live.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[OperatorLabel] = s.operator
	live.SetLabels(labels)
	live.Object["webhooks"] = webhooks
	if err := c.Update(ctx, live); err != nil {
		return fmt.Errorf("update %s %s: %w", gvk.Kind, name, err)
	}
	s.log.Info("Updated webhook registration (URL or caBundle)", "kind", gvk.Kind, "name", name)
	return nil
}

func (s *Server) ensureConversion(ctx context.Context, c *client.Client, h operators.Webhook) error {
	live := newObject(operators.CRDGroupVersionKind)
	if err := c.Get(ctx, client.ObjectKey{Name: h.CRD}, live); err != nil {
		return fmt.Errorf("get crd %s: %w", h.CRD, err)
	}
	spec, _ := live.Object["spec"].(map[string]any)
	if spec == nil {
		return fmt.Errorf("crd %s has no spec", h.CRD)
	}
	want := s.desiredConversion(h)
	if contains(spec["conversion"], want) {
		return nil
	}
	spec["conversion"] = want
	if err := c.Update(ctx, live); err != nil {
		return fmt.Errorf("update conversion of crd %s: %w", h.CRD, err)
	}
	s.log.Info("Updated conversion webhook of CRD (URL or caBundle)", "crd", h.CRD)
	return nil
}

// Keep keeps the registrations current until ctx ends: it watches the
// operator's webhook configurations and CRDs and registers again whenever
// one changes (someone edited a caBundle, deleted a configuration), renews the
// serving certificate RenewBefore its expiry or when the issuer's CA changes,
// and checks everything every ResyncInterval. Failures are logged and retried.
func (s *Server) Keep(ctx context.Context, c *client.Client) {
	name := ConfigurationName(s.operator)
	go s.watch(ctx, c, MutatingConfigurationKind, name)
	go s.watch(ctx, c, ValidatingConfigurationKind, name)
	for _, h := range s.hooks {
		if h.Type == operators.Conversion {
			go s.watch(ctx, c, operators.CRDGroupVersionKind, h.CRD)
		}
	}
	tick := time.NewTicker(s.opts.ResyncInterval)
	defer tick.Stop()
	retry := time.NewTimer(0)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.kick:
		case <-retry.C:
		}
		if s.needsRotation(time.Now()) {
			if err := s.Rotate(); err != nil {
				s.log.Error(err, "Renew webhook serving certificate")
			} else {
				s.log.Info("Renewed webhook serving certificate", "notAfter", s.Certificate().Leaf.NotAfter)
			}
		}
		if err := s.Register(ctx, c); err != nil && ctx.Err() == nil {
			s.log.Error(err, "Register webhooks; retrying")
			retry.Reset(time.Second)
		}
	}
}

// watch kicks Keep on every change of the object gvk/name, re-watching when
// the watch ends.
func (s *Server) watch(ctx context.Context, c *client.Client, gvk api.GroupVersionKind, name string) {
	for ctx.Err() == nil {
		list := &api.UnstructuredList{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind + "List"}
		w, err := c.Watch(ctx, list, &client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name)})
		if err == nil {
			for ev := range w.ResultChan() {
				if ev.Type != client.Bookmark {
					select {
					case s.kick <- struct{}{}:
					default:
					}
				}
			}
			w.Stop()
		} else if ctx.Err() == nil {
			s.log.V(1).Info("Watch for webhook registration failed", "kind", gvk.Kind, "name", name, "error", err.Error())
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func newObject(gvk api.GroupVersionKind) *api.Unstructured {
	return &api.Unstructured{Object: map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind}}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// jsonValue is v as generic JSON (maps, slices, float64).
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// contains reports whether have holds every field of want with the same
// value (lists element by element, same length): the server may add
// defaults, but nothing this package sets may differ.
func contains(have, want any) bool {
	return subset(jsonValue(have), jsonValue(want))
}

func subset(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			hv, ok := h[k]
			if !ok || !subset(hv, wv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !subset(h[i], w[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(have, want)
}
