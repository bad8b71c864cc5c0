package v1

import (
	"github.com/converge-dev/converge/framework/api/field"
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
