package v1

import (
	"slices"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
)

// ValidateRuntimeClass checks a RuntimeClass as Kubernetes does: the handler
// is a DNS label, overhead quantities are valid and non-negative, the
// scheduling node selector holds valid labels and its tolerations are valid.
func ValidateRuntimeClass(rc *RuntimeClass) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(rc.Handler) {
		errs = append(errs, field.Invalid(field.NewPath("handler"), rc.Handler, msg))
	}
	if rc.Overhead != nil {
		errs = append(errs, validateOverhead(rc.Overhead, field.NewPath("overhead"))...)
	}
	if s := rc.Scheduling; s != nil {
		p := field.NewPath("scheduling")
		errs = append(errs, validation.ValidateLabels(s.NodeSelector, p.Child("nodeSelector"))...)
		errs = append(errs, corev1.ValidateTolerations(s.Tolerations, p.Child("tolerations"))...)
	}
	return errs
}

// ValidateRuntimeClassUpdate checks an update: the new object must be valid
// and the handler is immutable.
func ValidateRuntimeClassUpdate(rc, old *RuntimeClass) field.ErrorList {
	errs := ValidateRuntimeClass(rc)
	if rc.Handler != old.Handler {
		errs = append(errs, field.Invalid(field.NewPath("handler"), rc.Handler, "field is immutable"))
	}
	return errs
}

func validateOverhead(o *Overhead, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := make([]string, 0, len(o.PodFixed))
	for name := range o.PodFixed {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		q := o.PodFixed[name]
		kp := p.Child("podFixed").Key(name)
		for _, msg := range validation.IsQualifiedName(name) {
			errs = append(errs, field.Invalid(kp, name, msg))
		}
		if v, err := q.MilliValue(); err != nil {
			errs = append(errs, field.Invalid(kp, q.String(), "must be a valid quantity"))
		} else if v < 0 {
			errs = append(errs, field.Invalid(kp, q.String(), "must be greater than or equal to 0"))
		}
	}
	return errs
}
