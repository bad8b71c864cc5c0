package v1

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
)

// ValidateLimitRange checks a LimitRange as Kubernetes does: known types, at
// most one item per type, resource names valid for the type, and consistent
// bounds (min ≤ defaultRequest ≤ default ≤ max, ratios ≥ 1 and within max/min).
func ValidateLimitRange(lr *LimitRange) field.ErrorList {
	var errs field.ErrorList
	seen := map[LimitType]bool{}
	lp := field.NewPath("spec", "limits")
	for i := range lr.Spec.Limits {
		ip := lp.Index(i)
		item := &lr.Spec.Limits[i]
		errs = append(errs, validateLimitType(item.Type, ip.Child("type"))...)
		if seen[item.Type] {
			errs = append(errs, field.Duplicate(ip.Child("type"), item.Type))
		}
		seen[item.Type] = true

		lists := map[string]ResourceList{"max": item.Max, "min": item.Min, "maxLimitRequestRatio": item.MaxLimitRequestRatio}
		if item.Type == LimitTypePod {
			if len(item.Default) > 0 {
				errs = append(errs, field.Forbidden(ip.Child("default"), "may not be specified when `type` is 'Pod'"))
			}
			if len(item.DefaultRequest) > 0 {
				errs = append(errs, field.Forbidden(ip.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
			}
		} else {
			lists["default"], lists["defaultRequest"] = item.Default, item.DefaultRequest
		}
		keys := map[string]bool{}
		for _, name := range []string{"max", "min", "default", "defaultRequest", "maxLimitRequestRatio"} {
			for _, k := range sortedKeys(lists[name]) {
				errs = append(errs, validateLimitRangeResourceName(item.Type, k, ip.Child(name).Key(k))...)
				if _, err := lists[name][k].Rat(); err != nil {
					errs = append(errs, field.Invalid(ip.Child(name).Key(k), lists[name][k].String(), "must be a valid quantity"))
				}
				keys[k] = true
			}
		}
		if item.Type == LimitTypePersistentVolumeClaim {
			_, hasMin := item.Min[string(ResourceStorage)]
			_, hasMax := item.Max[string(ResourceStorage)]
			if !hasMin && !hasMax {
				errs = append(errs, field.Required(ip.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
			}
		}
		for _, k := range sortedKeys(keys) {
			errs = append(errs, validateLimitBounds(lists, k, ip)...)
		}
	}
	return errs
}

// validateLimitBounds checks that the bounds of resource k are consistent.
func validateLimitBounds(lists map[string]ResourceList, k string, ip *field.Path) field.ErrorList {
	var errs field.ErrorList
	lookup := func(name string) (api.Quantity, bool) {
		q, ok := lists[name][k]
		return q, ok
	}
	minQ, hasMin := lookup("min")
	maxQ, hasMax := lookup("max")
	def, hasDef := lookup("default")
	defReq, hasDefReq := lookup("defaultRequest")
	ratio, hasRatio := lookup("maxLimitRequestRatio")
	check := func(ok bool, a, b api.Quantity, name string, value api.Quantity, format string) {
		if ok && a.Cmp(b) > 0 {
			errs = append(errs, field.Invalid(ip.Child(name).Key(k), value.String(), fmt.Sprintf(format, a.String(), b.String())))
		}
	}
	check(hasMin && hasMax, minQ, maxQ, "min", minQ, "min value %s is greater than max value %s")
	check(hasDefReq && hasMin, minQ, defReq, "defaultRequest", defReq, "min value %s is greater than default request value %s")
	check(hasDefReq && hasMax, defReq, maxQ, "defaultRequest", defReq, "default request value %s is greater than max value %s")
	check(hasDefReq && hasDef, defReq, def, "defaultRequest", defReq, "default request value %s is greater than default limit value %s")
	check(hasDef && hasMin, minQ, def, "default", minQ, "min value %s is greater than default value %s")
	check(hasDef && hasMax, def, maxQ, "default", maxQ, "default value %s is greater than max value %s")
	if hasRatio && ratio.Cmp(api.Quantity{S: "1"}) < 0 {
		errs = append(errs, field.Invalid(ip.Child("maxLimitRequestRatio").Key(k), ratio.String(), fmt.Sprintf("ratio %s is less than 1", ratio.String())))
	}
	if hasRatio && hasMin && hasMax && minQ.Sign() > 0 {
		maxR, _ := maxQ.Rat()
		minR, _ := minQ.Rat()
		limit := new(big.Rat).Quo(maxR, minR)
		r, _ := ratio.Rat()
		if r.Cmp(limit) > 0 {
			f, _ := limit.Float64()
			errs = append(errs, field.Invalid(ip.Child("maxLimitRequestRatio").Key(k), ratio.String(), fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), f)))
		}
	}
	if !isOvercommitAllowed(k) && hasDef && hasDefReq && def.Cmp(defReq) != 0 {
		errs = append(errs, field.Invalid(ip.Child("defaultRequest").Key(k), defReq.String(),
			fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", def.String(), defReq.String(), k)))
	}
	return errs
}

// isOvercommitAllowed reports whether requests of name may be below its
// limits: not for extended resources and huge pages.
func isOvercommitAllowed(name string) bool {
	return IsNativeResource(name) && !IsHugePageResourceName(name)
}

func validateLimitType(t LimitType, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(t)) {
		errs = append(errs, field.Invalid(p, t, msg))
	}
	if len(errs) == 0 && !strings.Contains(string(t), "/") &&
		!slices.Contains([]LimitType{LimitTypePod, LimitTypeContainer, LimitTypePersistentVolumeClaim}, t) {
		errs = append(errs, field.Invalid(p, t, "must be a standard limit type or fully qualified"))
	}
	return errs
}

// validateLimitRangeResourceName checks a resource name for a limit type:
// containers and pods take container resources, other types any resource.
func validateLimitRangeResourceName(t LimitType, name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(errs) > 0 || strings.Contains(name, "/") {
		return errs
	}
	switch t {
	case LimitTypePod, LimitTypeContainer:
		if name != string(ResourceCPU) && name != string(ResourceMemory) && name != string(ResourceEphemeralStorage) && !IsHugePageResourceName(name) {
			errs = append(errs, field.Invalid(p, name, "must be a standard resource for containers"))
		}
	default:
		if !IsStandardQuotaResourceName(name) && name != string(ResourceStorage) {
			errs = append(errs, field.Invalid(p, name, "must be a standard resource type or fully qualified"))
		}
	}
	return errs
}
