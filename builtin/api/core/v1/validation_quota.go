package v1

import (
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
)

// Prefixes of resource names.
const (
	// ResourceHugePagesPrefix starts huge page resource names (hugepages-2Mi).
	ResourceHugePagesPrefix = "hugepages-"
	// DefaultResourceRequestsPrefix turns an extended resource into its quota
	// name (requests.example.com/foo).
	DefaultResourceRequestsPrefix = "requests."
	// ResourceDefaultNamespacePrefix is the domain of Kubernetes' own resources.
	ResourceDefaultNamespacePrefix = "kubernetes.io/"
)

// standardQuotaResources are the quota resource names without a domain.
var standardQuotaResources = []string{
	string(ResourceCPU), string(ResourceMemory), string(ResourceEphemeralStorage), string(ResourceRequestsCPU), string(ResourceRequestsMemory),
	string(ResourceRequestsStorage), string(ResourceRequestsEphemeralStorage), string(ResourceLimitsCPU), string(ResourceLimitsMemory),
	string(ResourceLimitsEphemeralStorage), string(ResourcePods), string(ResourceQuotas), string(ResourceServices), string(ResourceReplicationControllers),
	string(ResourceSecrets), string(ResourcePersistentVolumeClaims), string(ResourceConfigMaps), string(ResourceServicesNodePorts),
	string(ResourceServicesLoadBalancers),
}

// integerQuotaResources are counted in whole units.
var integerQuotaResources = []string{
	string(ResourcePods), string(ResourceQuotas), string(ResourceServices), string(ResourceReplicationControllers), string(ResourceSecrets),
	string(ResourceConfigMaps), string(ResourcePersistentVolumeClaims), string(ResourceServicesNodePorts), string(ResourceServicesLoadBalancers),
}

// IsHugePageResourceName reports whether name is hugepages-<size>.
func IsHugePageResourceName(name string) bool {
	return strings.HasPrefix(name, ResourceHugePagesPrefix)
}

// isQuotaHugePageResourceName reports whether name quotas huge pages
// (hugepages-<size> or requests.hugepages-<size>).
func isQuotaHugePageResourceName(name string) bool {
	return IsHugePageResourceName(name) || strings.HasPrefix(name, DefaultResourceRequestsPrefix+ResourceHugePagesPrefix)
}

// IsStandardQuotaResourceName reports whether name is one of the quota
// resource names without a domain.
func IsStandardQuotaResourceName(name string) bool {
	return slices.Contains(standardQuotaResources, name) || isQuotaHugePageResourceName(name)
}

// IsNativeResource reports whether name is Kubernetes' own: without a domain
// or in kubernetes.io.
func IsNativeResource(name string) bool {
	return !strings.Contains(name, "/") || strings.Contains(name, ResourceDefaultNamespacePrefix)
}

// IsExtendedResourceName reports whether name is an extended resource
// (example.com/dongle): outside kubernetes.io, and valid as requests.<name>.
func IsExtendedResourceName(name string) bool {
	if IsNativeResource(name) || strings.HasPrefix(name, DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(DefaultResourceRequestsPrefix+name)) == 0
}

// isIntegerResourceName reports whether name is counted in whole units.
func isIntegerResourceName(name string) bool {
	return slices.Contains(integerQuotaResources, name) || IsExtendedResourceName(name)
}

// Scopes a quota may name.
var standardQuotaScopes = []ResourceQuotaScope{
	ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort,
	ResourceQuotaScopeNotBestEffort, ResourceQuotaScopePriorityClass, ResourceQuotaScopeCrossNamespacePodAffinity,
	ResourceQuotaScopeVolumeAttributesClass,
}

// IsResourceQuotaScopeValidForResource reports whether a quota with scope can
// limit resource.
func IsResourceQuotaScopeValidForResource(scope ResourceQuotaScope, resource string) bool {
	podCompute := []string{string(ResourceCPU), string(ResourceMemory), string(ResourceLimitsCPU), string(ResourceLimitsMemory), string(ResourceRequestsCPU), string(ResourceRequestsMemory)}
	switch scope {
	case ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeNotBestEffort,
		ResourceQuotaScopePriorityClass, ResourceQuotaScopeCrossNamespacePodAffinity:
		return resource == string(ResourcePods) || slices.Contains(podCompute, resource)
	case ResourceQuotaScopeBestEffort:
		return resource == string(ResourcePods)
	case ResourceQuotaScopeVolumeAttributesClass:
		return resource == string(ResourcePersistentVolumeClaims) || resource == string(ResourceRequestsStorage)
	}
	return true
}

// ValidateResourceQuota checks a quota's spec and status.
func ValidateResourceQuota(q *ResourceQuota) field.ErrorList {
	errs := validateResourceQuotaSpec(&q.Spec, field.NewPath("spec"))
	return append(errs, validateResourceQuotaStatus(&q.Status, field.NewPath("status"))...)
}

// ValidateResourceQuotaUpdate checks an update of a quota like a new one.
func ValidateResourceQuotaUpdate(q, _ *ResourceQuota) field.ErrorList {
	return ValidateResourceQuota(q)
}

// ValidateResourceQuotaStatusUpdate checks a write of status: only
// status.hard and status.used are looked at.
func ValidateResourceQuotaStatusUpdate(q, _ *ResourceQuota) field.ErrorList {
	return validateResourceQuotaStatus(&q.Status, field.NewPath("status"))
}

func validateResourceQuotaSpec(s *ResourceQuotaSpec, p *field.Path) field.ErrorList {
	errs := validateQuotaList(s.Hard, p.Child("hard"))
	errs = append(errs, validateQuotaScopes(s, p)...)
	if s.ScopeSelector != nil {
		errs = append(errs, validateScopeSelector(s, p.Child("scopeSelector"))...)
	}
	return errs
}

func validateResourceQuotaStatus(s *ResourceQuotaStatus, p *field.Path) field.ErrorList {
	errs := validateQuotaList(s.Hard, p.Child("hard"))
	return append(errs, validateQuotaList(s.Used, p.Child("used"))...)
}

// validateQuotaList checks every name and amount of a quota resource list.
func validateQuotaList(list ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(list) {
		rp := p.Key(k)
		errs = append(errs, validateQuotaResourceName(k, rp)...)
		errs = append(errs, validateQuotaQuantity(k, list[k], rp)...)
	}
	return errs
}

func validateQuotaResourceName(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !strings.Contains(name, "/") && !IsStandardQuotaResourceName(name) {
		errs = append(errs, field.Invalid(p, name, "must be a standard resource for quota"))
	}
	return errs
}

func validateQuotaQuantity(name string, q api.Quantity, p *field.Path) field.ErrorList {
	r, err := q.Rat()
	if err != nil {
		return field.ErrorList{field.Invalid(p, q.String(), "must be a valid quantity")}
	}
	var errs field.ErrorList
	if r.Sign() < 0 {
		errs = append(errs, field.Invalid(p, q.String(), "must be greater than or equal to 0"))
	}
	if (isIntegerResourceName(name) || strings.HasPrefix(name, "count/")) && !r.IsInt() {
		errs = append(errs, field.Invalid(p, q.String(), "must be an integer"))
	}
	return errs
}

// invalidScopePairs may not appear together.
var invalidScopePairs = [][2]ResourceQuotaScope{
	{ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort},
	{ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating},
}

func validateQuotaScopes(s *ResourceQuotaSpec, p *field.Path) field.ErrorList {
	if len(s.Scopes) == 0 {
		return nil
	}
	var errs field.ErrorList
	sp := p.Child("scopes")
	for _, scope := range s.Scopes {
		if !slices.Contains(standardQuotaScopes, scope) {
			errs = append(errs, field.Invalid(sp, s.Scopes, "unsupported scope"))
		}
		for _, k := range sortedKeys(s.Hard) {
			if IsStandardQuotaResourceName(k) && !IsResourceQuotaScopeValidForResource(scope, k) {
				errs = append(errs, field.Invalid(sp, s.Scopes, "unsupported scope applied to resource"))
			}
		}
	}
	for _, pair := range invalidScopePairs {
		if slices.Contains(s.Scopes, pair[0]) && slices.Contains(s.Scopes, pair[1]) {
			errs = append(errs, field.Invalid(sp, s.Scopes, "conflicting scopes"))
		}
	}
	return errs
}

func validateScopeSelector(s *ResourceQuotaSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	mp := p.Child("matchExpressions")
	var scopes []ResourceQuotaScope
	for _, req := range s.ScopeSelector.MatchExpressions {
		if !slices.Contains(standardQuotaScopes, req.ScopeName) {
			errs = append(errs, field.Invalid(mp.Child("scopeName"), req.ScopeName, "unsupported scope"))
		}
		for _, k := range sortedKeys(s.Hard) {
			if IsStandardQuotaResourceName(k) && !IsResourceQuotaScopeValidForResource(req.ScopeName, k) {
				errs = append(errs, field.Invalid(mp, s.ScopeSelector, "unsupported scope applied to resource"))
			}
		}
		switch req.ScopeName {
		case ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort, ResourceQuotaScopeTerminating,
			ResourceQuotaScopeNotTerminating, ResourceQuotaScopeCrossNamespacePodAffinity:
			if req.Operator != ScopeSelectorOpExists {
				errs = append(errs, field.Invalid(mp.Child("operator"), req.Operator,
					"must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
			}
		}
		switch req.Operator {
		case ScopeSelectorOpIn, ScopeSelectorOpNotIn:
			if len(req.Values) == 0 {
				errs = append(errs, field.Required(mp.Child("values"),
					"must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
			}
		case ScopeSelectorOpExists, ScopeSelectorOpDoesNotExist:
			if len(req.Values) != 0 {
				errs = append(errs, field.Invalid(mp.Child("values"), req.Values,
					"must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
			}
		default:
			errs = append(errs, field.Invalid(mp.Child("operator"), req.Operator, "not a valid selector operator"))
		}
		scopes = append(scopes, req.ScopeName)
	}
	for _, pair := range invalidScopePairs {
		if slices.Contains(scopes, pair[0]) && slices.Contains(scopes, pair[1]) {
			errs = append(errs, field.Invalid(mp, s.Scopes, "conflicting scopes"))
		}
	}
	return errs
}
