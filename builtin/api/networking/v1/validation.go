package v1

import (
	"net/netip"

	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
)

// ValidateIngress checks an Ingress: a default backend or rules; each HTTP
// path with a supported pathType (an absolute path for Exact and Prefix) and
// a valid backend.
func ValidateIngress(in *Ingress) field.ErrorList {
	p := field.NewPath("spec")
	var errs field.ErrorList
	if in.Spec.DefaultBackend == nil && len(in.Spec.Rules) == 0 {
		errs = append(errs, field.Invalid(p, in.Spec, "either `defaultBackend` or `rules` must be specified"))
	}
	if b := in.Spec.DefaultBackend; b != nil {
		errs = append(errs, validateBackend(b, p.Child("defaultBackend"))...)
	}
	for i, r := range in.Spec.Rules {
		rp := p.Child("rules").Index(i)
		if r.HTTP == nil {
			continue
		}
		hp := rp.Child("http", "paths")
		if len(r.HTTP.Paths) == 0 {
			errs = append(errs, field.Required(hp, ""))
		}
		for j, path := range r.HTTP.Paths {
			pp := hp.Index(j)
			switch {
			case path.PathType == nil:
				errs = append(errs, field.Required(pp.Child("pathType"), "pathType must be specified"))
			case *path.PathType == PathTypeExact || *path.PathType == PathTypePrefix:
				if len(path.Path) == 0 || path.Path[0] != '/' {
					errs = append(errs, field.Invalid(pp.Child("path"), path.Path, "must be an absolute path"))
				}
			case *path.PathType == PathTypeImplementationSpecific:
				if path.Path != "" && path.Path[0] != '/' {
					errs = append(errs, field.Invalid(pp.Child("path"), path.Path, "must be an absolute path"))
				}
			default:
				errs = append(errs, field.NotSupported(pp.Child("pathType"), string(*path.PathType),
					[]string{string(PathTypeExact), string(PathTypeImplementationSpecific), string(PathTypePrefix)}))
			}
			errs = append(errs, validateBackend(&path.Backend, pp.Child("backend"))...)
		}
	}
	return errs
}

func validateBackend(b *IngressBackend, p *field.Path) field.ErrorList {
	switch {
	case b.Service == nil && b.Resource == nil:
		return field.ErrorList{field.Invalid(p, b, "one backend (`service` or `resource`) must be specified")}
	case b.Service != nil && b.Resource != nil:
		return field.ErrorList{field.Invalid(p, b, "cannot set both `service` and `resource` backends")}
	case b.Service != nil:
		var errs field.ErrorList
		if b.Service.Name == "" {
			errs = append(errs, field.Required(p.Child("service", "name"), ""))
		}
		port := b.Service.Port
		switch {
		case port.Name != "" && port.Number != 0:
			errs = append(errs, field.Invalid(p.Child("service", "port"), port, "cannot set both port name & port number"))
		case port.Name == "" && port.Number == 0:
			errs = append(errs, field.Required(p.Child("service", "port"), "port name or number is required"))
		case port.Number < 0 || port.Number > 65535:
			errs = append(errs, field.Invalid(p.Child("service", "port", "number"), port.Number, "must be between 1 and 65535, inclusive"))
		}
		return errs
	}
	return nil
}

const maxLenIngressClassController = 250

// ValidateIngressClass checks an IngressClass: spec.controller a
// domain-prefixed path of at most 250 characters, and a well-formed
// parameters reference.
func ValidateIngressClass(ic *IngressClass) field.ErrorList {
	p := field.NewPath("spec")
	var errs field.ErrorList
	if len(ic.Spec.Controller) > maxLenIngressClassController {
		errs = append(errs, field.TooLong(p.Child("controller"), "", maxLenIngressClassController))
	}
	errs = append(errs, validation.IsDomainPrefixedPath(p.Child("controller"), ic.Spec.Controller)...)
	return append(errs, validateIngressClassParameters(ic.Spec.Parameters, p.Child("parameters"))...)
}

// ValidateIngressClassUpdate checks an update: spec.controller is immutable.
func ValidateIngressClassUpdate(ic, old *IngressClass) field.ErrorList {
	errs := validation.ValidateImmutableField(ic.Spec.Controller, old.Spec.Controller, field.NewPath("spec", "controller"))
	return append(errs, ValidateIngressClass(ic)...)
}

func validateIngressClassParameters(r *IngressClassParametersReference, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if r.APIGroup != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*r.APIGroup) {
			errs = append(errs, field.Invalid(p.Child("apiGroup"), *r.APIGroup, msg))
		}
	}
	errs = append(errs, requiredPathSegment(p.Child("kind"), r.Kind)...)
	errs = append(errs, requiredPathSegment(p.Child("name"), r.Name)...)
	if r.Scope == nil {
		return append(errs, field.Required(p.Child("scope"), ""))
	}
	switch *r.Scope {
	case IngressClassParametersReferenceScopeNamespace:
		if r.Namespace == nil {
			errs = append(errs, field.Required(p.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
		} else {
			for _, msg := range validation.ValidateNamespaceName(*r.Namespace, false) {
				errs = append(errs, field.Invalid(p.Child("namespace"), *r.Namespace, msg))
			}
		}
	case IngressClassParametersReferenceScopeCluster:
		if r.Namespace != nil {
			errs = append(errs, field.Forbidden(p.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("scope"), *r.Scope,
			[]string{IngressClassParametersReferenceScopeCluster, IngressClassParametersReferenceScopeNamespace}))
	}
	return errs
}

// requiredPathSegment checks a required name that must be usable as one URL
// path segment.
func requiredPathSegment(p *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsValidPathSegmentName(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

// IPAddressName is the name rule of IPAddress: the address in canonical form
// (names are never generated).
func IPAddressName(name string, _ bool) []string {
	var msgs []string
	for _, e := range validation.IsValidIP(&field.Path{}, name) {
		msgs = append(msgs, e.Detail)
	}
	return msgs
}

// ValidateIPAddress checks an IPAddress: spec.parentRef is required, with a
// resource and a name (and the group a DNS subdomain when set).
func ValidateIPAddress(ip *IPAddress) field.ErrorList {
	p := field.NewPath("spec", "parentRef")
	r := ip.Spec.ParentRef
	if r == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if r.Group != "" { // the core group (Services) is the empty string
		for _, msg := range validation.IsDNS1123Subdomain(r.Group) {
			errs = append(errs, field.Invalid(p.Child("group"), r.Group, msg))
		}
	}
	errs = append(errs, requiredPathSegment(p.Child("resource"), r.Resource)...)
	errs = append(errs, requiredPathSegment(p.Child("name"), r.Name)...)
	if r.Namespace != "" {
		for _, msg := range validation.IsValidPathSegmentName(r.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), r.Namespace, msg))
		}
	}
	return errs
}

// ValidateIPAddressUpdate checks an update: spec.parentRef is immutable.
func ValidateIPAddressUpdate(ip, old *IPAddress) field.ErrorList {
	return validation.ValidateImmutableField(ip.Spec.ParentRef, old.Spec.ParentRef, field.NewPath("spec", "parentRef"))
}

// ValidateServiceCIDR checks a ServiceCIDR: one or two CIDRs in canonical
// form, two only when they are of different IP families.
func ValidateServiceCIDR(c *ServiceCIDR) field.ErrorList {
	return validateServiceCIDRs(c.Spec.CIDRs, field.NewPath("spec", "cidrs"))
}

func validateServiceCIDRs(cidrs []string, p *field.Path) field.ErrorList {
	switch {
	case len(cidrs) == 0:
		return field.ErrorList{field.Required(p, "at least one CIDR required")}
	case len(cidrs) > 2:
		return field.ErrorList{field.Invalid(p, ServiceCIDRSpec{CIDRs: cidrs}, "may only hold up to 2 values")}
	}
	var errs field.ErrorList
	for i, c := range cidrs {
		errs = append(errs, validation.IsValidCIDR(p.Index(i), c)...)
	}
	if len(cidrs) == 2 {
		f0, f1 := ipFamily(cidrs[0]), ipFamily(cidrs[1])
		if f0 != 0 && f0 == f1 {
			errs = append(errs, field.Invalid(p, cidrs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
		}
	}
	return errs
}

// ipFamily is 4 or 6 for a parseable CIDR, else 0.
func ipFamily(cidr string) int {
	pfx, err := netip.ParsePrefix(cidr)
	switch {
	case err != nil:
		return 0
	case pfx.Addr().Is4():
		return 4
	default:
		return 6
	}
}

// ValidateServiceCIDRUpdate checks an update: the CIDRs never change, except
// that a single-stack range may gain a CIDR of the other family.
func ValidateServiceCIDRUpdate(c, old *ServiceCIDR) field.ErrorList {
	p := field.NewPath("spec", "cidrs")
	now, was := c.Spec.CIDRs, old.Spec.CIDRs
	switch {
	case len(now) == len(was):
		var errs field.ErrorList
		for i := range was {
			if now[i] != was[i] {
				errs = append(errs, field.Invalid(p.Index(i), now[i], validation.FieldImmutableErrorMsg))
			}
		}
		return errs
	case len(was) == 1 && len(now) == 2:
		var errs field.ErrorList
		if now[0] != was[0] {
			errs = append(errs, field.Invalid(p.Index(0), now[0], validation.FieldImmutableErrorMsg))
		}
		return append(errs, validateServiceCIDRs(now, p)...)
	default:
		return field.ErrorList{field.Invalid(p, now, validation.FieldImmutableErrorMsg)}
	}
}
