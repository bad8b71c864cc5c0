package v1

import (
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
)

// ValidateAPIService checks an APIService as Kubernetes does: its name is
// "<version>.<group>", the version is a DNS label and the group a DNS
// subdomain (empty only for the core group's "v1."), the priorities are in
// range, and a service reference comes with a CA bundle or
// insecureSkipTLSVerify (and a local APIService has neither).
func ValidateAPIService(s *APIService) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if want := s.Spec.Version + "." + s.Spec.Group; s.Name != want {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), s.Name, "must be `spec.version+\".\"+spec.group`: \""+want+"\""))
	}
	for _, msg := range validation.IsDNS1035Label(s.Spec.Version) {
		errs = append(errs, field.Invalid(spec.Child("version"), s.Spec.Version, msg))
	}
	if s.Spec.Group == "" {
		if s.Spec.Version != "v1" {
			errs = append(errs, field.Required(spec.Child("group"), "only v1 may have an empty group and it better be legacy kube"))
		}
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(s.Spec.Group) {
			errs = append(errs, field.Invalid(spec.Child("group"), s.Spec.Group, msg))
		}
	}
	if p := s.Spec.GroupPriorityMinimum; p <= 0 || p > 20000 {
		errs = append(errs, field.Invalid(spec.Child("groupPriorityMinimum"), p, "must be positive and less than 20000"))
	}
	if p := s.Spec.VersionPriority; p <= 0 || p > 1000 {
		errs = append(errs, field.Invalid(spec.Child("versionPriority"), p, "must be positive and less than 1000"))
	}
	if s.Spec.Service == nil {
		if len(s.Spec.CABundle) > 0 {
			errs = append(errs, field.Invalid(spec.Child("caBundle"), "(bytes)", "local APIServices may not have a caBundle"))
		}
		if s.Spec.InsecureSkipTLSVerify {
			errs = append(errs, field.Invalid(spec.Child("insecureSkipTLSVerify"), true, "local APIServices may not have insecureSkipTLSVerify"))
		}
		return errs
	}
	svc := spec.Child("service")
	if s.Spec.Service.Namespace == "" {
		errs = append(errs, field.Required(svc.Child("namespace"), ""))
	}
	if s.Spec.Service.Name == "" {
		errs = append(errs, field.Required(svc.Child("name"), ""))
	}
	if p := s.Spec.Service.Port; p != nil && (*p < 1 || *p > 65535) {
		errs = append(errs, field.Invalid(svc.Child("port"), *p, "port is not valid: must be between 1 and 65535, inclusive"))
	}
	if s.Spec.InsecureSkipTLSVerify && len(s.Spec.CABundle) > 0 {
		errs = append(errs, field.Invalid(spec.Child("insecureSkipTLSVerify"), true, "may not be true if caBundle is present"))
	}
	return errs
}

// ValidateAPIServiceUpdate checks an update (the new object must be valid).
func ValidateAPIServiceUpdate(s, _ *APIService) field.ErrorList { return ValidateAPIService(s) }

// ValidateAPIServiceStatusUpdate checks a status update: each condition has
// a type and a status of True, False or Unknown.
func ValidateAPIServiceStatusUpdate(s, _ *APIService) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status", "conditions")
	for i, c := range s.Status.Conditions {
		if c.Type == "" {
			errs = append(errs, field.Required(p.Index(i).Child("type"), ""))
		}
		if c.Status != "True" && c.Status != "False" && c.Status != "Unknown" {
			errs = append(errs, field.NotSupported(p.Index(i).Child("status"), c.Status, []string{"True", "False", "Unknown"}))
		}
	}
	return errs
}

// validateName accepts "<version>.<group>" names: a DNS subdomain, or "v1."
// (the core group's, which ends in a dot).
func validateName(name string, prefix bool) []string {
	if name == "v1." && !prefix {
		return nil
	}
	return validation.IsDNS1123Subdomain(name)
}
