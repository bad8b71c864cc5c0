package v1

import (
	"github.com/converge-dev/converge/builtin/api/internal/apivalidation"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
)

// ValidatePolicyRule checks one rule like Kubernetes: verbs are required, and a
// rule names either resources (with apiGroups) or non-resource URLs; in a
// namespaced Role non-resource URLs are not allowed.
func ValidatePolicyRule(r PolicyRule, namespaced bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Verbs) == 0 {
		errs = append(errs, field.Required(p.Child("verbs"), "verbs must contain at least one value"))
	}
	if len(r.NonResourceURLs) > 0 {
		if namespaced {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(r.APIGroups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0 {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return errs
	}
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(r.Resources) == 0 {
		errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
	}
	return errs
}

func validateRules(rules []PolicyRule, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	for i, r := range rules {
		errs = append(errs, ValidatePolicyRule(r, namespaced, field.NewPath("rules").Index(i))...)
	}
	return errs
}

// ValidateRole checks a Role.
func ValidateRole(r *Role) field.ErrorList { return validateRules(r.Rules, true) }

// ValidateClusterRole checks a ClusterRole (rules and aggregation selectors).
func ValidateClusterRole(r *ClusterRole) field.ErrorList {
	errs := validateRules(r.Rules, false)
	if r.AggregationRule != nil {
		p := field.NewPath("aggregationRule", "clusterRoleSelectors")
		if len(r.AggregationRule.ClusterRoleSelectors) == 0 {
			errs = append(errs, field.Required(p, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
		}
		for i := range r.AggregationRule.ClusterRoleSelectors {
			errs = append(errs, apivalidation.ValidateLabelSelector(&r.AggregationRule.ClusterRoleSelectors[i], p.Index(i))...)
		}
	}
	return errs
}

func validateRoleRef(ref RoleRef, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("roleRef")
	if ref.APIGroup != GroupName {
		errs = append(errs, field.NotSupported(p.Child("apiGroup"), ref.APIGroup, []string{GroupName}))
	}
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	if ref.Kind != "ClusterRole" && !(namespaced && ref.Kind == "Role") {
		errs = append(errs, field.NotSupported(p.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	return errs
}

func validateSubjects(subjects []Subject) field.ErrorList {
	var errs field.ErrorList
	for i, s := range subjects {
		p := field.NewPath("subjects").Index(i)
		if s.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		switch s.Kind {
		case ServiceAccountKind:
			if s.APIGroup != "" {
				errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{""}))
			}
		case UserKind, GroupKind:
			if s.APIGroup != GroupName {
				errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{GroupName}))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind, []string{ServiceAccountKind, UserKind, GroupKind}))
		}
	}
	return errs
}

// ValidateRoleBinding checks a RoleBinding.
func ValidateRoleBinding(b *RoleBinding) field.ErrorList {
	return append(validateRoleRef(b.RoleRef, true), validateSubjects(b.Subjects)...)
}

// ValidateClusterRoleBinding checks a ClusterRoleBinding.
func ValidateClusterRoleBinding(b *ClusterRoleBinding) field.ErrorList {
	return append(validateRoleRef(b.RoleRef, false), validateSubjects(b.Subjects)...)
}

func roleRefImmutable(ref, old RoleRef) field.ErrorList {
	if ref != old {
		return field.ErrorList{field.Invalid(field.NewPath("roleRef"), ref, "cannot change roleRef")}
	}
	return nil
}

// ValidatePathSegmentName is RBAC's name rule (Kubernetes'
// path.ValidatePathSegmentName): any name usable as one URL path segment, so
// "system:aggregate-to-admin" is valid.
func ValidatePathSegmentName(name string, prefix bool) []string {
	if prefix && (name == "." || name == "..") {
		return nil // a prefix of a longer name
	}
	return validation.IsValidPathSegmentName(name)
}

// DefaultRoleBinding fills what Kubernetes' rbac/v1 defaulting fills: an
// empty roleRef.apiGroup is rbac.authorization.k8s.io, and so is the apiGroup
// of User and Group subjects that leave it empty.
func DefaultRoleBinding(b *RoleBinding) { defaultBinding(&b.RoleRef, b.Subjects) }

// DefaultClusterRoleBinding is DefaultRoleBinding for ClusterRoleBindings.
func DefaultClusterRoleBinding(b *ClusterRoleBinding) { defaultBinding(&b.RoleRef, b.Subjects) }

func defaultBinding(ref *RoleRef, subjects []Subject) {
	if ref.APIGroup == "" {
		ref.APIGroup = GroupName
	}
	for i := range subjects {
		if s := &subjects[i]; s.APIGroup == "" && (s.Kind == UserKind || s.Kind == GroupKind) {
			s.APIGroup = GroupName
		}
	}
}
