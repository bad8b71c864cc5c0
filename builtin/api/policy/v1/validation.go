package v1

import (
	"github.com/converge-dev/converge/builtin/api/internal/apivalidation"
	"github.com/converge-dev/converge/framework/api/field"
)

// ValidatePodDisruptionBudget checks a budget (metadata excluded).
func ValidatePodDisruptionBudget(pdb *PodDisruptionBudget) field.ErrorList {
	return ValidatePodDisruptionBudgetSpec(&pdb.Spec, field.NewPath("spec"))
}

// ValidatePodDisruptionBudgetSpec checks a budget's spec.
func ValidatePodDisruptionBudgetSpec(spec *PodDisruptionBudgetSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.MinAvailable != nil && spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(fldPath, field.OmitValue, "minAvailable and maxUnavailable cannot be both set"))
	}
	if spec.MinAvailable != nil {
		p := fldPath.Child("minAvailable")
		errs = append(errs, apivalidation.ValidatePositiveIntOrPercent(*spec.MinAvailable, p)...)
		errs = append(errs, apivalidation.IsNotMoreThan100Percent(*spec.MinAvailable, p)...)
	}
	if spec.MaxUnavailable != nil {
		p := fldPath.Child("maxUnavailable")
		errs = append(errs, apivalidation.ValidatePositiveIntOrPercent(*spec.MaxUnavailable, p)...)
		errs = append(errs, apivalidation.IsNotMoreThan100Percent(*spec.MaxUnavailable, p)...)
	}
	errs = append(errs, apivalidation.ValidateLabelSelector(spec.Selector, fldPath.Child("selector"))...)
	if p := spec.UnhealthyPodEvictionPolicy; p != nil && *p != IfHealthyBudget && *p != AlwaysAllow {
		errs = append(errs, field.NotSupported(fldPath.Child("unhealthyPodEvictionPolicy"), string(*p),
			[]string{string(AlwaysAllow), string(IfHealthyBudget)}))
	}
	return errs
}
