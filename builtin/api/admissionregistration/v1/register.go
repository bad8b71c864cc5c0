package v1

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
	"github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/scheme"
)

// Resources returns the admissionregistration.k8s.io/v1 resources.
func Resources() []*registry.Resource {
	return append([]*registry.Resource{
		{
			GroupVersion: GroupVersion, Resource: "validatingwebhookconfigurations", Kind: "ValidatingWebhookConfiguration",
			ListKind: "ValidatingWebhookConfigurationList", Singular: "validatingwebhookconfiguration", Categories: []string{"api-extensions"},
			Strategy: registry.Typed[ValidatingWebhookConfiguration]{Default: DefaultValidating, Validate: ValidateValidating},
			Type:     reflect.TypeFor[ValidatingWebhookConfiguration](), Printer: printer(),
		},
		{
			GroupVersion: GroupVersion, Resource: "mutatingwebhookconfigurations", Kind: "MutatingWebhookConfiguration",
			ListKind: "MutatingWebhookConfigurationList", Singular: "mutatingwebhookconfiguration", Categories: []string{"api-extensions"},
			Strategy: registry.Typed[MutatingWebhookConfiguration]{Default: DefaultMutating, Validate: ValidateMutating},
			Type:     reflect.TypeFor[MutatingWebhookConfiguration](), Printer: printer(),
		},
	}, policyResources()...)
}

// AddToScheme registers the kinds in s under admissionregistration.k8s.io/v1.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion,
		&ValidatingWebhookConfiguration{}, &ValidatingWebhookConfigurationList{},
		&MutatingWebhookConfiguration{}, &MutatingWebhookConfigurationList{},
		&ValidatingAdmissionPolicy{}, &ValidatingAdmissionPolicyList{},
		&ValidatingAdmissionPolicyBinding{}, &ValidatingAdmissionPolicyBindingList{},
	)
}

func printer() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks in the configuration."},
			{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			c, err := registry.FromMap[MutatingWebhookConfiguration](obj)
			if err != nil {
				return nil, fmt.Errorf("decode webhook configuration: %w", err)
			}
			return []any{c.Name, int64(len(c.Webhooks)), registry.Age(c.CreationTimestamp, now)}, nil
		},
	}
}

func defaultCommon(fp, mp **string, ns, os **api.LabelSelector, timeout **int32, rules []RuleWithOperations) {
	if *fp == nil {
		*fp = api.Ptr("Fail")
	}
	if *mp == nil {
		*mp = api.Ptr("Equivalent")
	}
	if *ns == nil {
		*ns = &api.LabelSelector{}
	}
	if *os == nil {
		*os = &api.LabelSelector{}
	}
	if *timeout == nil {
		*timeout = api.Ptr[int32](10)
	}
	for i := range rules {
		if rules[i].Scope == nil {
			rules[i].Scope = api.Ptr("*")
		}
	}
}

// DefaultValidating applies Kubernetes' defaults (failurePolicy Fail, matchPolicy
// Equivalent, empty selectors, timeoutSeconds 10, rule scope "*").
func DefaultValidating(c *ValidatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules)
	}
}

// DefaultMutating is DefaultValidating plus reinvocationPolicy Never.
func DefaultMutating(c *MutatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules)
		if w.ReinvocationPolicy == nil {
			w.ReinvocationPolicy = api.Ptr("Never")
		}
	}
}

func validateWebhook(p *field.Path, name string, cc WebhookClientConfig, rules []RuleWithOperations, fp, se *string, timeout *int32, versions []string) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if !strings.Contains(name, ".") {
		errs = append(errs, field.Invalid(p.Child("name"), name, "should be a domain with at least three segments separated by dots"))
	}
	ccp := p.Child("clientConfig")
	switch {
	case cc.URL == nil && cc.Service == nil:
		errs = append(errs, field.Required(ccp, "exactly one of url or service is required"))
	case cc.URL != nil && cc.Service != nil:
		errs = append(errs, field.Required(ccp, "exactly one of url or service is required"))
	case cc.URL != nil:
		u, err := url.Parse(*cc.URL)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			errs = append(errs, field.Invalid(ccp.Child("url"), *cc.URL, "'https' is the only allowed URL scheme"))
		}
	default:
		if cc.Service.Name == "" {
			errs = append(errs, field.Required(ccp.Child("service", "name"), "service name is required"))
		}
		if cc.Service.Namespace == "" {
			errs = append(errs, field.Required(ccp.Child("service", "namespace"), "service namespace is required"))
		}
	}
	for i, r := range rules {
		errs = append(errs, validateRule(p.Child("rules").Index(i), r)...)
	}
	if fp != nil && *fp != "Fail" && *fp != "Ignore" {
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), *fp, []string{"Fail", "Ignore"}))
	}
	if se == nil {
		errs = append(errs, field.Required(p.Child("sideEffects"), "must specify one of None, NoneOnDryRun"))
	} else if *se != "None" && *se != "NoneOnDryRun" {
		errs = append(errs, field.NotSupported(p.Child("sideEffects"), *se, []string{"None", "NoneOnDryRun"}))
	}
	if timeout != nil && (*timeout < 1 || *timeout > 30) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), *timeout, "the timeout value must be between 1 and 30 seconds"))
	}
	if !slices.Contains(versions, "v1") {
		errs = append(errs, field.Required(p.Child("admissionReviewVersions"), "must include at least one of v1"))
	}
	return errs
}

// ValidateValidating checks a ValidatingWebhookConfiguration.
func ValidateValidating(c *ValidatingWebhookConfiguration) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, w := range c.Webhooks {
		p := field.NewPath("webhooks").Index(i)
		if seen[w.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), w.Name))
		}
		seen[w.Name] = true
		errs = append(errs, validateWebhook(p, w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions)...)
		errs = append(errs, validateMatchConditions(p.Child("matchConditions"), w.MatchConditions, admission.CompileMatchCondition)...)
	}
	return errs
}

// ValidateMutating checks a MutatingWebhookConfiguration.
func ValidateMutating(c *MutatingWebhookConfiguration) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, w := range c.Webhooks {
		p := field.NewPath("webhooks").Index(i)
		if seen[w.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), w.Name))
		}
		seen[w.Name] = true
		errs = append(errs, validateWebhook(p, w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions)...)
		errs = append(errs, validateMatchConditions(p.Child("matchConditions"), w.MatchConditions, admission.CompileMatchCondition)...)
		if rp := w.ReinvocationPolicy; rp != nil && *rp != "Never" && *rp != "IfNeeded" {
			errs = append(errs, field.NotSupported(p.Child("reinvocationPolicy"), *rp, []string{"Never", "IfNeeded"}))
		}
	}
	return errs
}

func hook(config, name string, cc WebhookClientConfig, rules []RuleWithOperations, fp, se *string, ns, os *api.LabelSelector, timeout *int32) admission.Hook {
	h := admission.Hook{Name: name, Configuration: config, CABundle: cc.CABundle, NamespaceSelector: ns, ObjectSelector: os}
	if cc.URL != nil {
		h.URL = *cc.URL
	}
	if s := cc.Service; s != nil {
		h.Service = &admission.ServiceReference{Namespace: s.Namespace, Name: s.Name, Port: 443}
		if s.Path != nil {
			h.Service.Path = *s.Path
		}
		if s.Port != nil {
			h.Service.Port = *s.Port
		}
	}
	h.FailurePolicy = "Fail"
	if fp != nil {
		h.FailurePolicy = *fp
	}
	if se != nil {
		h.SideEffects = *se
	}
	if timeout != nil {
		h.TimeoutSeconds = *timeout
	}
	for _, r := range rules {
		ar := admission.Rule{Operations: r.Operations, APIGroups: r.APIGroups, APIVersions: r.APIVersions, Resources: r.Resources, Scope: "*"}
		if r.Scope != nil {
			ar.Scope = *r.Scope
		}
		h.Rules = append(h.Rules, ar)
	}
	return h
}

func matchConditions(in []MatchCondition) []admission.MatchCondition {
	var out []admission.MatchCondition
	for _, c := range in {
		out = append(out, admission.MatchCondition{Name: c.Name, Expression: c.Expression})
	}
	return out
}

// validateMatchConditions checks names (unique qualified names) and that each
// expression compiles to a bool, like Kubernetes: with compile, or later
// when compile is nil (a policy's, compiled with its other expressions).
func validateMatchConditions(p *field.Path, conds []MatchCondition, compile func(string) error) field.ErrorList {
	var errs field.ErrorList
	if len(conds) > admission.MaxMatchConditions {
		errs = append(errs, field.TooMany(p, len(conds), admission.MaxMatchConditions))
	}
	seen := map[string]bool{}
	for i, c := range conds {
		cp := p.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(cp.Child("name"), ""))
		case seen[c.Name]:
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		default:
			for _, msg := range validation.IsQualifiedName(c.Name) {
				errs = append(errs, field.Invalid(cp.Child("name"), c.Name, msg))
			}
		}
		seen[c.Name] = true
		if strings.TrimSpace(c.Expression) == "" {
			errs = append(errs, field.Required(cp.Child("expression"), ""))
		} else if compile == nil {
			continue
		} else if err := compile(c.Expression); err != nil {
			errs = append(errs, field.Invalid(cp.Child("expression"), c.Expression, err.Error()))
		}
	}
	return errs
}

// ValidatingHooks returns the webhooks of configs in Kubernetes' call order
// (configurations by name, then webhooks in order).
func ValidatingHooks(configs []ValidatingWebhookConfiguration) []admission.Hook {
	slices.SortFunc(configs, func(a, b ValidatingWebhookConfiguration) int { return strings.Compare(a.Name, b.Name) })
	var out []admission.Hook
	for _, c := range configs {
		for _, w := range c.Webhooks {
			h := hook(c.Name, w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.SideEffects, w.NamespaceSelector, w.ObjectSelector, w.TimeoutSeconds)
			if w.MatchPolicy != nil {
				h.MatchPolicy = *w.MatchPolicy
			}
			h.MatchConditions = matchConditions(w.MatchConditions)
			out = append(out, h)
		}
	}
	return out
}

// MutatingHooks returns the webhooks of configs in call order.
func MutatingHooks(configs []MutatingWebhookConfiguration) []admission.Hook {
	slices.SortFunc(configs, func(a, b MutatingWebhookConfiguration) int { return strings.Compare(a.Name, b.Name) })
	var out []admission.Hook
	for _, c := range configs {
		for _, w := range c.Webhooks {
			h := hook(c.Name, w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.SideEffects, w.NamespaceSelector, w.ObjectSelector, w.TimeoutSeconds)
			if w.MatchPolicy != nil {
				h.MatchPolicy = *w.MatchPolicy
			}
			h.MatchConditions = matchConditions(w.MatchConditions)
			if w.ReinvocationPolicy != nil {
				h.ReinvocationPolicy = *w.ReinvocationPolicy
			}
			out = append(out, h)
		}
	}
	return out
}
