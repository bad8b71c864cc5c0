package v1

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/converge-dev/converge/builtin/admissionpolicy/expr"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// policyResources are the ValidatingAdmissionPolicy resources.
func policyResources() []*registry.Resource {
	return []*registry.Resource{
		{
			GroupVersion: GroupVersion, Resource: "validatingadmissionpolicies", Kind: "ValidatingAdmissionPolicy",
			ListKind: "ValidatingAdmissionPolicyList", Singular: "validatingadmissionpolicy", Categories: []string{"api-extensions"},
			Strategy: registry.Typed[ValidatingAdmissionPolicy]{Default: DefaultPolicy, Validate: ValidatePolicy,
				ValidateStatusUpdateFunc: func(obj, _ *ValidatingAdmissionPolicy) field.ErrorList { return nil }},
			StatusSubresource: true, Generation: true,
			Type: reflect.TypeFor[ValidatingAdmissionPolicy](), Printer: policyPrinter(),
		},
		{
			GroupVersion: GroupVersion, Resource: "validatingadmissionpolicybindings", Kind: "ValidatingAdmissionPolicyBinding",
			ListKind: "ValidatingAdmissionPolicyBindingList", Singular: "validatingadmissionpolicybinding", Categories: []string{"api-extensions"},
			Strategy: registry.Typed[ValidatingAdmissionPolicyBinding]{Default: DefaultBinding, Validate: ValidateBinding},
			Type:     reflect.TypeFor[ValidatingAdmissionPolicyBinding](), Printer: bindingPrinter(),
		},
	}
}

func policyPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "Validations", Type: "integer", Description: "Validations is the number of CEL expressions the policy checks."},
			{Name: "ParamKind", Type: "string", Description: "ParamKind is the kind of the policy's parameters."},
			{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			p, err := registry.FromMap[ValidatingAdmissionPolicy](obj)
			if err != nil {
				return nil, fmt.Errorf("decode validating admission policy: %w", err)
			}
			pk := "<unset>"
			if k := p.Spec.ParamKind; k != nil {
				pk = k.APIVersion + "/" + k.Kind
			}
			return []any{p.Name, int64(len(p.Spec.Validations)), pk, registry.Age(p.CreationTimestamp, now)}, nil
		},
	}
}

func bindingPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "PolicyName", Type: "string", Description: "PolicyName is the bound policy."},
			{Name: "ParamRef", Type: "string", Description: "ParamRef names the parameter objects."},
			{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			b, err := registry.FromMap[ValidatingAdmissionPolicyBinding](obj)
			if err != nil {
				return nil, fmt.Errorf("decode validating admission policy binding: %w", err)
			}
			pr := "<unset>"
			if r := b.Spec.ParamRef; r != nil {
				switch {
				case r.Name != "" && r.Namespace != "":
					pr = r.Namespace + "/" + r.Name
				case r.Name != "":
					pr = r.Name
				default:
					pr = "*"
				}
			}
			return []any{b.Name, b.Spec.PolicyName, pr, registry.Age(b.CreationTimestamp, now)}, nil
		},
	}
}

func defaultMatchResources(m *MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = api.Ptr("Equivalent")
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &api.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &api.LabelSelector{}
	}
	for _, rules := range [][]NamedRuleWithOperations{m.ResourceRules, m.ExcludeResourceRules} {
		for i := range rules {
			if rules[i].Scope == nil {
				rules[i].Scope = api.Ptr("*")
			}
		}
	}
}

// DefaultPolicy applies Kubernetes' defaults: failurePolicy Fail,
// matchPolicy Equivalent, empty selectors, rule scope "*".
func DefaultPolicy(p *ValidatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = api.Ptr("Fail")
	}
	defaultMatchResources(p.Spec.MatchConstraints)
}

// DefaultBinding defaults the binding's matchResources like a policy's.
func DefaultBinding(b *ValidatingAdmissionPolicyBinding) {
	defaultMatchResources(b.Spec.MatchResources)
}

// PolicySource is the policy's expressions, for expr.
func PolicySource(spec *ValidatingAdmissionPolicySpec) expr.Source {
	var src expr.Source
	for _, v := range spec.Variables {
		src.Variables = append(src.Variables, expr.NamedExpression{Name: v.Name, Expression: v.Expression})
	}
	for _, v := range spec.Validations {
		src.Validations = append(src.Validations, expr.Validation{Expression: v.Expression, MessageExpression: v.MessageExpression})
	}
	for _, a := range spec.AuditAnnotations {
		src.AuditAnnotations = append(src.AuditAnnotations, expr.NamedExpression{Name: a.Key, Expression: a.ValueExpression})
	}
	for _, m := range spec.MatchConditions {
		src.MatchConditions = append(src.MatchConditions, expr.NamedExpression{Name: m.Name, Expression: m.Expression})
	}
	return src
}

var (
	celIdentifier = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)
	validReasons  = []string{"Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge"}
)

// ValidatePolicy checks a ValidatingAdmissionPolicy; expressions that do not
// compile are reported at their field with the compiler's message.
func ValidatePolicy(p *ValidatingAdmissionPolicy) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	s := &p.Spec
	if k := s.ParamKind; k != nil {
		kp := spec.Child("paramKind")
		if k.APIVersion == "" {
			errs = append(errs, field.Required(kp.Child("apiVersion"), ""))
		} else if gv, err := api.ParseGroupVersion(k.APIVersion); err != nil || gv.Version == "" {
			errs = append(errs, field.Invalid(kp.Child("apiVersion"), k.APIVersion, "must be a group/version or a version"))
		}
		if k.Kind == "" {
			errs = append(errs, field.Required(kp.Child("kind"), ""))
		}
	}
	if s.MatchConstraints == nil {
		errs = append(errs, field.Required(spec.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, validateMatchResources(spec.Child("matchConstraints"), s.MatchConstraints, true)...)
	}
	if len(s.Validations) == 0 && len(s.AuditAnnotations) == 0 {
		errs = append(errs, field.Required(spec.Child("validations"), "validations or auditAnnotations must contain at least one item"))
	}
	if fp := s.FailurePolicy; fp != nil && *fp != "Fail" && *fp != "Ignore" {
		errs = append(errs, field.NotSupported(spec.Child("failurePolicy"), *fp, []string{"Fail", "Ignore"}))
	}
	seen := map[string]bool{}
	for i, v := range s.Variables {
		vp := spec.Child("variables").Index(i)
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(vp.Child("name"), "name is not specified"))
		case !celIdentifier.MatchString(v.Name):
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, "name is not a valid CEL identifier"))
		case seen[v.Name]:
			errs = append(errs, field.Duplicate(vp.Child("name"), v.Name))
		}
		seen[v.Name] = true
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(vp.Child("expression"), "expression is not specified"))
		}
	}
	for i, v := range s.Validations {
		vp := spec.Child("validations").Index(i)
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(vp.Child("expression"), "expression is not specified"))
		}
		if strings.ContainsAny(v.Message, "\r\n") {
			errs = append(errs, field.Invalid(vp.Child("message"), v.Message, "message must not contain line breaks"))
		} else if len(v.Message) > 0 && strings.TrimSpace(v.Message) == "" {
			errs = append(errs, field.Invalid(vp.Child("message"), v.Message, "message must be non-empty if specified"))
		}
		if r := v.Reason; r != nil && !slices.Contains(validReasons, *r) {
			errs = append(errs, field.NotSupported(vp.Child("reason"), *r, validReasons))
		}
	}
	keys := map[string]bool{}
	for i, a := range s.AuditAnnotations {
		ap := spec.Child("auditAnnotations").Index(i)
		switch {
		case a.Key == "":
			errs = append(errs, field.Required(ap.Child("key"), ""))
		case keys[a.Key]:
			errs = append(errs, field.Duplicate(ap.Child("key"), a.Key))
		default:
			qualified := p.Name + "/" + a.Key
			for _, msg := range validation.IsQualifiedName(qualified) {
				errs = append(errs, field.Invalid(ap.Child("key"), a.Key, msg))
			}
		}
		keys[a.Key] = true
		if strings.TrimSpace(a.ValueExpression) == "" {
			errs = append(errs, field.Required(ap.Child("valueExpression"), "valueExpression is not specified"))
		}
	}
	errs = append(errs, validateMatchConditions(spec.Child("matchConditions"), s.MatchConditions, nil)...)
	if len(errs) > 0 {
		return errs
	}
	_, cerrs := expr.Compile(PolicySource(s))
	return cerrs
}

func validateMatchResources(p *field.Path, m *MatchResources, needRules bool) field.ErrorList {
	var errs field.ErrorList
	if mp := m.MatchPolicy; mp != nil && *mp != "Exact" && *mp != "Equivalent" {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *mp, []string{"Equivalent", "Exact"}))
	}
	if m.NamespaceSelector != nil {
		errs = append(errs, validation.ValidateLabelSelector(m.NamespaceSelector, p.Child("namespaceSelector"))...)
	}
	if m.ObjectSelector != nil {
		errs = append(errs, validation.ValidateLabelSelector(m.ObjectSelector, p.Child("objectSelector"))...)
	}
	if needRules && len(m.ResourceRules) == 0 {
		errs = append(errs, field.Required(p.Child("resourceRules"), ""))
	}
	for i, r := range m.ResourceRules {
		errs = append(errs, validateNamedRule(p.Child("resourceRules").Index(i), r)...)
	}
	for i, r := range m.ExcludeResourceRules {
		errs = append(errs, validateNamedRule(p.Child("excludeResourceRules").Index(i), r)...)
	}
	return errs
}

func validateNamedRule(p *field.Path, r NamedRuleWithOperations) field.ErrorList {
	errs := validateRule(p, r.RuleWithOperations)
	for i, n := range r.ResourceNames {
		if n == "" {
			errs = append(errs, field.Invalid(p.Child("resourceNames").Index(i), n, "must not be empty"))
		}
	}
	return errs
}

// validateRule checks one rule of a webhook or policy.
func validateRule(rp *field.Path, r RuleWithOperations) field.ErrorList {
	var errs field.ErrorList
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(rp.Child("operations"), ""))
	}
	for _, op := range r.Operations {
		if !slices.Contains([]string{"*", "CREATE", "UPDATE", "DELETE", "CONNECT"}, op) {
			errs = append(errs, field.NotSupported(rp.Child("operations"), op, []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}))
		}
	}
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(rp.Child("apiGroups"), ""))
	}
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(rp.Child("apiVersions"), ""))
	}
	if len(r.Resources) == 0 {
		errs = append(errs, field.Required(rp.Child("resources"), ""))
	}
	if r.Scope != nil && !slices.Contains([]string{"*", "Cluster", "Namespaced"}, *r.Scope) {
		errs = append(errs, field.NotSupported(rp.Child("scope"), *r.Scope, []string{"*", "Cluster", "Namespaced"}))
	}
	return errs
}

// ValidateBinding checks a ValidatingAdmissionPolicyBinding.
func ValidateBinding(b *ValidatingAdmissionPolicyBinding) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	s := &b.Spec
	if s.PolicyName == "" {
		errs = append(errs, field.Required(spec.Child("policyName"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(s.PolicyName) {
			errs = append(errs, field.Invalid(spec.Child("policyName"), s.PolicyName, msg))
		}
	}
	if r := s.ParamRef; r != nil {
		rp := spec.Child("paramRef")
		switch {
		case r.Name != "" && r.Selector != nil:
			errs = append(errs, field.Forbidden(rp.Child("name"), "name and selector are mutually exclusive"))
		case r.Name == "" && r.Selector == nil:
			errs = append(errs, field.Required(rp, "one of name or selector must be specified"))
		}
		if r.Name != "" && r.Name != "*" {
			for _, msg := range validation.IsDNS1123Subdomain(r.Name) {
				errs = append(errs, field.Invalid(rp.Child("name"), r.Name, msg))
			}
		}
		if r.Selector != nil {
			errs = append(errs, validation.ValidateLabelSelector(r.Selector, rp.Child("selector"))...)
		}
		if r.Namespace != "" {
			for _, msg := range validation.IsDNS1123Label(r.Namespace) {
				errs = append(errs, field.Invalid(rp.Child("namespace"), r.Namespace, msg))
			}
		}
		if a := r.ParameterNotFoundAction; a == nil {
			errs = append(errs, field.Required(rp.Child("parameterNotFoundAction"), ""))
		} else if *a != "Deny" && *a != "Allow" {
			errs = append(errs, field.NotSupported(rp.Child("parameterNotFoundAction"), *a, []string{"Allow", "Deny"}))
		}
	}
	if m := s.MatchResources; m != nil {
		errs = append(errs, validateMatchResources(spec.Child("matchResources"), m, false)...)
	}
	ap := spec.Child("validationActions")
	if len(s.ValidationActions) == 0 {
		errs = append(errs, field.Required(ap, "at least one validation action is required"))
	}
	seen := map[string]bool{}
	for i, a := range s.ValidationActions {
		if !slices.Contains([]string{ActionDeny, ActionWarn, ActionAudit}, a) {
			errs = append(errs, field.NotSupported(ap.Index(i), a, []string{ActionAudit, ActionDeny, ActionWarn}))
		}
		if seen[a] {
			errs = append(errs, field.Duplicate(ap.Index(i), a))
		}
		seen[a] = true
	}
	if seen[ActionDeny] && seen[ActionWarn] {
		errs = append(errs, field.Invalid(ap, s.ValidationActions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	return errs
}
