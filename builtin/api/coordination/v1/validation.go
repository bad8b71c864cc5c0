package v1

import "github.com/converge-dev/converge/framework/api/field"

// ValidateLease checks a Lease (metadata excluded) like Kubernetes:
// leaseDurationSeconds is positive, leaseTransitions non-negative, and a
// preferredHolder needs a holderIdentity.
func ValidateLease(l *Lease) field.ErrorList {
	var errs field.ErrorList
	s, p := &l.Spec, field.NewPath("spec")
	if s.LeaseDurationSeconds != nil && *s.LeaseDurationSeconds <= 0 {
		errs = append(errs, field.Invalid(p.Child("leaseDurationSeconds"), *s.LeaseDurationSeconds, "must be greater than 0"))
	}
	if s.LeaseTransitions != nil && *s.LeaseTransitions < 0 {
		errs = append(errs, field.Invalid(p.Child("leaseTransitions"), *s.LeaseTransitions, "must be greater than or equal to 0"))
	}
	if s.PreferredHolder != nil && *s.PreferredHolder != "" && (s.HolderIdentity == nil || *s.HolderIdentity == "") {
		errs = append(errs, field.Forbidden(p.Child("preferredHolder"), "may only be specified if `holderIdentity` is specified"))
	}
	return errs
}
