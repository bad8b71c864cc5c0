package v1

import (
	"fmt"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api/field"
)

// ValidatePriorityClass checks a new class like Kubernetes: a name with the
// "system-" prefix must be one of the system classes with its exact value and
// globalDefault; any other class's value is at most
// HighestUserDefinablePriority; preemptionPolicy is PreemptLowerPriority or
// Never. The server validates the rest of the metadata.
func ValidatePriorityClass(pc *PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if strings.HasPrefix(pc.Name, SystemPriorityClassPrefix) {
		if err := isKnownSystemPriorityClass(pc.Name, pc.Value, pc.GlobalDefault); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"),
				"priority class names with '"+SystemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > HighestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"),
			fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
	}
	if p := pc.PreemptionPolicy; p != nil && *p != corev1.PreemptLowerPriority && *p != corev1.PreemptNever {
		errs = append(errs, field.NotSupported(field.NewPath("preemptionPolicy"), string(*p),
			[]string{string(corev1.PreemptLowerPriority), string(corev1.PreemptNever)}))
	}
	return errs
}

// ValidatePriorityClassUpdate checks an update: value and preemptionPolicy are
// immutable; description and globalDefault may change.
func ValidatePriorityClassUpdate(pc, old *PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if pc.Value != old.Value {
		errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	if policyOf(pc.PreemptionPolicy) != policyOf(old.PreemptionPolicy) {
		errs = append(errs, field.Invalid(field.NewPath("preemptionPolicy"), policyOf(pc.PreemptionPolicy), "field is immutable"))
	}
	return errs
}

func policyOf(p *corev1.PreemptionPolicy) string {
	if p == nil {
		return ""
	}
	return string(*p)
}

// isKnownSystemPriorityClass reports (as an error) why name, value and
// globalDefault do not describe one of the system classes.
func isKnownSystemPriorityClass(name string, value int32, globalDefault bool) error {
	for _, spc := range SystemPriorityClasses() {
		if spc.Name != name {
			continue
		}
		if spc.Value != value {
			return fmt.Errorf("value of %v PriorityClass must be %v", spc.Name, spc.Value)
		}
		if spc.GlobalDefault != globalDefault {
			return fmt.Errorf("globalDefault of %v PriorityClass must be %v", spc.Name, spc.GlobalDefault)
		}
		return nil
	}
	return fmt.Errorf("%v is not a known system priority class", name)
}
