package v1

import (
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/api/validation"
)

// ValidateReplicationController checks a ReplicationController as Kubernetes
// does: a non-empty selector, a template whose labels it matches, restart
// policy Always, no activeDeadlineSeconds, non-negative counts.
func ValidateReplicationController(rc *ReplicationController) field.ErrorList {
	s, p := &rc.Spec, field.NewPath("spec")
	var errs field.ErrorList
	if s.Replicas != nil && *s.Replicas < 0 {
		errs = append(errs, field.Invalid(p.Child("replicas"), *s.Replicas, "must be greater than or equal to 0"))
	}
	if s.MinReadySeconds < 0 {
		errs = append(errs, field.Invalid(p.Child("minReadySeconds"), s.MinReadySeconds, "must be greater than or equal to 0"))
	}
	selPath := p.Child("selector")
	if len(s.Selector) == 0 {
		errs = append(errs, field.Required(selPath, ""))
	} else {
		errs = append(errs, validation.ValidateLabels(s.Selector, selPath)...)
	}
	tp := p.Child("template")
	t := s.Template
	if t == nil {
		return append(errs, field.Required(tp, ""))
	}
	if len(s.Selector) > 0 && !labels.SelectorFromSet(s.Selector).Matches(t.Labels) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, ValidatePodTemplateSpec(t, tp)...)
	if rp := t.Spec.RestartPolicy; rp != "" && rp != RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), string(rp), []string{string(RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Invalid(tp.Child("spec", "activeDeadlineSeconds"), *t.Spec.ActiveDeadlineSeconds,
			"activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return errs
}

// ValidateReplicationControllerUpdate checks an update (the selector may change in core/v1).
func ValidateReplicationControllerUpdate(rc, _ *ReplicationController) field.ErrorList {
	return ValidateReplicationController(rc)
}
