package validation

import (
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

// ValidateDeleteOptions refuses what Kubernetes' ValidateDeleteOptions
// refuses: unknown dryRun values and propagation policies, and
// orphanDependents together with propagationPolicy.
func ValidateDeleteOptions(opts *api.DeleteOptions) field.ErrorList {
	var errs field.ErrorList
	for _, v := range opts.DryRun {
		if v != "All" {
			errs = append(errs, field.NotSupported(field.NewPath("dryRun"), v, []string{"All"}))
		}
	}
	if p := opts.PropagationPolicy; p != nil {
		switch *p {
		case api.DeletePropagationOrphan, api.DeletePropagationBackground, api.DeletePropagationForeground:
		default:
			errs = append(errs, field.NotSupported(field.NewPath("propagationPolicy"), *p,
				[]string{api.DeletePropagationForeground, api.DeletePropagationBackground, api.DeletePropagationOrphan}))
		}
		if opts.OrphanDependents != nil {
			errs = append(errs, field.Invalid(field.NewPath("propagationPolicy"), *p, "orphanDependents and deletionPropagation cannot be both set"))
		}
	}
	return errs
}
